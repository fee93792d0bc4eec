import { describe, expect, it } from 'vitest';
import { checkBind, checkRequestOrigin, isLoopbackHost, tokenFromRequest, tokensMatch } from './access.js';

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.10', false],
    ['example.com', false],
  ])('%s → %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});

describe('checkBind', () => {
  it.each([
    ['127.0.0.1', undefined, true],
    ['0.0.0.0', undefined, false],
    ['0.0.0.0', 'secret', true],
  ])('%s with token %s → ok %s', (host, token, ok) => {
    const result = checkBind(host, token);
    expect(result.ok).toBe(ok);
    if (!result.ok) expect(result.path).toBe('channels.web.token');
  });
});

describe('checkRequestOrigin', () => {
  it.each([
    [{ host: '127.0.0.1:3000', origin: 'http://127.0.0.1:3000' }, true, true],
    [{ host: '127.0.0.1:3000' }, true, true],
    [{ host: 'localhost:3000', origin: 'http://localhost:3000' }, true, true],
    [{ host: '[::1]:3000', origin: 'http://[::1]:3000' }, true, true],
    [{ host: '127.0.0.1:3000', origin: 'https://evil.example' }, true, false],
    [{ host: 'evil.example:3000', origin: 'http://evil.example:3000' }, true, false],
    [{ host: 'chat.example:3000', origin: 'http://chat.example:3000' }, false, true],
    [{ host: '127.0.0.1:3000', origin: 'null' }, true, false],
    [{}, true, false],
  ])('%j (loopback bind %s) → %s', (headers, loopback, ok) => {
    expect(checkRequestOrigin(headers, loopback)).toBe(ok);
  });
});

describe('tokens', () => {
  it('reads the token from query, bearer header or cookie', () => {
    const url = (q = '') => new URL(`http://127.0.0.1/${q}`);
    expect(tokenFromRequest(url('?token=a'), {})).toBe('a');
    expect(tokenFromRequest(url(), { authorization: 'Bearer b' })).toBe('b');
    expect(tokenFromRequest(url(), { cookie: 'x=1; warden_token=c%3Dd' })).toBe('c=d');
    expect(tokenFromRequest(url(), {})).toBeUndefined();
  });

  it.each([
    ['s3cret', 's3cret', true],
    ['s3cre', 's3cret', false],
    ['s3cret ', 's3cret', false],
    ['S3cret', 's3cret', false],
    ['', '', false],
    [undefined, 's3cret', false],
  ])('%s vs %s → %s', (given, expected, ok) => {
    expect(tokensMatch(given, expected)).toBe(ok);
  });
});
