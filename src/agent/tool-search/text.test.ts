import { describe, expect, it } from 'vitest';
import { segment, stem, terms, words } from './text.js';

describe('words', () => {
  it.each<[string, string[]]>([
    ['list_pull_requests', ['list', 'pull', 'requests']],
    ['listPullRequests', ['list', 'pull', 'requests']],
    ['kubectl-scale', ['kubectl', 'scale']],
    ['HTTPServerURL2', ['http', 'server', 'url2']],
    ['which PRs are open', ['which', 'prs', 'are', 'open']],
    ['k8s in prod', ['k8s', 'in', 'prod']],
    ['github__create_issue', ['github', 'create', 'issue']],
    ['', []],
  ])('%j → %j', (text, expected) => {
    expect(words(text)).toEqual(expected);
  });
});

describe('stem', () => {
  it.each<[string[], string]>([
    [['merge', 'merged', 'merging', 'merges'], 'merg'],
    [['policy', 'policies'], 'policy'],
    [['patch', 'patches'], 'patch'],
    [['stop', 'stopped', 'stopping'], 'stop'],
    [['replica', 'replicas'], 'replica'],
    [['page', 'pages', 'paging', 'paged'], 'pag'],
    [['create', 'created', 'creating'], 'creat'],
    [['status'], 'status'],
    [['string'], 'string'],
    [['process', 'processes'], 'process'],
  ])('%j → %s', (forms, expected) => {
    for (const f of forms) expect(stem(f), f).toBe(expected);
  });
});

describe('terms', () => {
  it('drops stop words and one-letter words, stems the rest', () => {
    expect(terms('Show me all of the open PRs, a to z')).toEqual(['open', 'prs']);
  });
});

describe('segment', () => {
  const known = (w: string) => ['list', 'pull', 'requests', 'request', 'get', 'me'].includes(w);
  it.each<[string, string[] | undefined]>([
    ['listpullrequests', ['list', 'pull', 'requests']],
    ['getpullrequest', ['get', 'pull', 'request']],
    ['list', undefined],
    ['listxyzzy', undefined],
  ])('%s → %j', (word, expected) => {
    expect(segment(word, known)).toEqual(expected);
  });
});
