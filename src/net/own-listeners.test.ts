import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseConfig, type WardenConfigInput } from '../config/index.js';
import { configuredListeners, isThisHost, ownListenerAt, registerOwnListener, registerOwnListenerSource, registerServer, runningListeners, type OwnListener } from './own-listeners.js';

/** A machine with a LAN address, a ULA, a link-local address and a fake-IP TUN interface. */
const INTERFACES = ['127.0.0.1', '0:0:0:0:0:0:0:1', '192.168.1.20', 'fd00:0:0:0:0:0:0:2', 'fe80:0:0:0:fc:ff:fe00:1', '198.18.0.1'];

describe('isThisHost', () => {
  it.each([
    ['127.0.0.1', true], ['127.0.0.2', true], ['127.255.255.254', true], ['0.0.0.0', true], ['0.1.2.3', true],
    ['::1', true], ['[::1]', true], ['0:0:0:0:0:0:0:1', true], ['::', true],
    ['::ffff:127.0.0.1', true], ['::ffff:7f00:1', true], ['::127.0.0.1', true], ['64:ff9b::7f00:1', true], ['2002:7f00:1::', true],
    ['192.168.1.20', true], ['::ffff:192.168.1.20', true], ['64:ff9b::c0a8:114', true],
    ['fd00::2', true], ['FD00:0::2', true], ['fe80::fc:ff:fe00:1', true], ['fe80::fc:ff:fe00:1%eth0', true], ['198.18.0.1', true],
    ['192.168.1.21', false], ['fe80::1', false], ['10.0.0.1', false], ['8.8.8.8', false], ['example.com', false], ['127.1', false],
  ])('%s → %s', (address, expected) => {
    expect(isThisHost(address, INTERFACES)).toBe(expected);
  });
});

describe('ownListenerAt', () => {
  const web: OwnListener = { name: 'web chat', host: '127.0.0.1', port: 3000 };
  const exposed: OwnListener = { name: 'Slack HTTP receiver', host: '203.0.113.7', port: 3001 };
  it.each([
    ['127.0.0.1', 3000, web],
    ['192.168.1.20', 3000, web], // a loopback bind is refused on the LAN address too: the safe side
    ['::', 3000, web],
    ['127.0.0.1', 3001, exposed],
    ['203.0.113.7', 3001, exposed], // bound to exactly that address
    ['127.0.0.1', 3002, undefined],
    ['8.8.8.8', 3000, undefined],
  ])('%s:%s', (address, port, expected) => {
    expect(ownListenerAt(address, port, [web, exposed], INTERFACES)).toEqual(expected);
  });
});

describe('configuredListeners', () => {
  const listenersOf = (input: WardenConfigInput) => {
    const parsed = parseConfig(input);
    if (!parsed.ok) throw parsed.error;
    return configuredListeners(parsed.value.config);
  };
  // The ops listener runs in every mode, so every config opens it unless it is switched off.
  const ops: OwnListener = { name: 'ops listener', host: '127.0.0.1', port: 3004 };
  it.each<[string, WardenConfigInput, OwnListener[]]>([
    ['the default web chat', {}, [{ name: 'web chat', host: '127.0.0.1', port: 3000 }, ops]],
    ['a web chat on every address', { channels: { web: { host: '0.0.0.0', port: 8080, token: 't' } } }, [{ name: 'web chat', host: '0.0.0.0', port: 8080 }, ops]],
    ['a web chat on port 0 (known once bound)', { channels: { web: { port: 0 } } }, [ops]],
    ['Slack over HTTP (no web chat then)', { channels: { slack: { botToken: 'xoxb-1', signingSecret: 's' } } }, [{ name: 'Slack HTTP receiver', host: '127.0.0.1', port: 3001 }, ops]],
    ['Slack in Socket Mode listens nowhere but ops', { channels: { slack: { botToken: 'xoxb-1', appToken: 'xapp-1' } } }, [ops]],
    ['Discord listens nowhere but ops', { channels: { discord: { token: 'd' } } }, [ops]],
    ['ops on another port', { channels: { discord: { token: 'd' } }, ops: { port: 9464 } }, [{ ...ops, port: 9464 }]],
    ['ops exposed in a container', { channels: { discord: { token: 'd' } }, ops: { host: '0.0.0.0', exposeBeyondLoopback: true } }, [{ ...ops, host: '0.0.0.0' }]],
    ['ops switched off', { channels: { discord: { token: 'd' } }, ops: { enabled: false } }, []],
    ['ops on port 0 (known once bound)', { channels: { discord: { token: 'd' } }, ops: { port: 0 } }, []],
  ])('%s', (_name, input, expected) => {
    expect(listenersOf(input)).toEqual(expected);
  });
});

describe('the registry of running listeners', () => {
  it('holds a registered listener until it is released, and reads sources at each call', () => {
    const before = runningListeners().length;
    const off = registerOwnListener({ name: 'ops API', host: '::', port: 9100 });
    let live: OwnListener[] = [{ name: 'Slack HTTP receiver', host: '127.0.0.1', port: 9101 }];
    const offSource = registerOwnListenerSource(() => live);
    expect(runningListeners().slice(before).map((l) => l.port)).toEqual([9100, 9101]);
    live = [];
    expect(runningListeners().slice(before).map((l) => l.port)).toEqual([9100]);
    off();
    offSource();
    expect(runningListeners()).toHaveLength(before);
  });

  it('registers a server under its bound address while it listens', async () => {
    const server = createServer();
    registerServer(server, 'test listener');
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    expect(runningListeners()).toContainEqual({ name: 'test listener', host: '127.0.0.1', port });
    await new Promise<void>((r) => server.close(() => r()));
    expect(runningListeners().some((l) => l.port === port && l.name === 'test listener')).toBe(false);
  });
});
