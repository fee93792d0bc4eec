import { describe, expect, it } from 'vitest';
import { DEFAULT_RANK_OPTIONS, rankTools, type Searchable } from './rank.js';
import { FEATURES } from './rerank.js';
import { terms } from './text.js';

const schema = (props: Record<string, string>) => ({
  type: 'object',
  properties: Object.fromEntries(Object.entries(props).map(([k, d]) => [k, { type: 'string', description: d }])),
});
const repo = { owner: 'Repository owner', repo: 'Repository name' };

/** A few tools as real MCP servers list them, next to Warden's own generic ones. */
const CATALOG: Searchable[] = [
  { id: 'web_fetch', description: 'Fetch a public web page and return its readable content.', parameters: schema({ url: 'The URL to fetch.' }) },
  { id: 'web_search', description: 'Search the web and return titles, links and snippets.', parameters: schema({ query: 'Search text.' }) },
  { id: 'sessions_yield', description: 'End this turn and wait for spawned subagents to report.', parameters: schema({}) },
  { id: 'session_status', description: "Show this session's model, usage and state.", parameters: schema({}) },
  { id: 'message', description: 'Send a message to a chat channel or user.', parameters: schema({ to: 'Channel or user.', text: 'The text.' }) },
  { id: 'github__list_pull_requests', description: 'List pull requests in a GitHub repository.', parameters: schema({ ...repo, state: 'Filter by state: open, closed, all' }) },
  { id: 'github__merge_pull_request', description: 'Merge a pull request.', parameters: schema({ ...repo, pull_number: 'Pull request number', merge_method: 'Merge method' }) },
  { id: 'github__get_pull_request', description: 'Get details of a specific pull request.', parameters: schema({ ...repo, pull_number: 'Pull request number' }) },
  { id: 'github__create_issue', description: 'Create a new issue in a GitHub repository.', parameters: schema({ ...repo, title: 'Issue title', body: 'Issue body' }) },
  { id: 'github__listcommits', description: 'Get the commits of a branch.', parameters: schema({ ...repo, sha: 'Branch name or SHA' }) },
  { id: 'sentry__merge_issues', description: 'Merge several Sentry issues into one issue.', parameters: schema({ issue_ids: 'The issues to merge' }) },
  { id: 'sentry__list_issues', description: 'List the unresolved issues of a Sentry project.', parameters: schema({ project: 'Project slug' }) },
  { id: 'kubernetes__kubectl_scale', description: 'Scale a Kubernetes deployment.', parameters: schema({ name: 'Name of the deployment', namespace: 'Namespace', replicas: 'Number of replicas' }) },
  { id: 'kubernetes__kubectl_get', description: 'Get or list Kubernetes resources by resource type, name, and optionally namespace.', parameters: schema({ resourceType: 'Type of resource', name: 'Name', namespace: 'Namespace' }) },
  { id: 'pagerduty__create_incident', description: 'Create an incident on a PagerDuty service.', parameters: schema({ service_id: 'The service', title: 'Incident title', urgency: 'high or low' }) },
  { id: 'pagerduty__list_oncalls', description: 'List who is on call for the escalation policies.', parameters: schema({ escalation_policy_ids: 'Policies' }) },
  { id: 'confluence__get_page', description: 'Get a Confluence page by id.', parameters: schema({ page_id: 'Page id' }) },
];

describe('ranking requests as teammates phrase them', () => {
  it('which PRs are still waiting to be merged: the pull requests, never the Sentry merge', () => {
    // Learned from three authors' requests, the re-ranker weighs a said name verb ("merged")
    // above the question's reading: the list is in the top three, no longer first.
    const top = rankTools('which PRs are still waiting to be merged', CATALOG, 3).map((t) => t.id);
    expect(top).toContain('github__list_pull_requests');
    expect(top).not.toContain('sentry__merge_issues');
    expect(top.every((id) => id.startsWith('github__'))).toBe(true);
  });

  it.each<[string, string]>([
    // The misses that named this ranker's work: team speak against a generic tool's shared word.
    ['bump the web frontend to 6 copies in prod', 'kubernetes__kubectl_scale'],
    ['merge these two sentry issues', 'sentry__merge_issues'],
    ['fetch https://example.com and summarize it', 'web_fetch'],
    ['who is on call right now', 'pagerduty__list_oncalls'],
    ['recent commits on main', 'github__listcommits'],
    ['kubernetes__kubectl_get', 'kubernetes__kubectl_get'],
    ['list_pull_requests', 'github__list_pull_requests'],
  ])('%s → %s first', (query, id) => {
    expect(rankTools(query, CATALOG, 3).map((t) => t.id)[0]).toBe(id);
  });

  it.each<[string, string]>([
    ['page whoever is on call, checkout is down', 'pagerduty__create_incident'],
    ['open a ticket on github about the flaky login', 'github__create_issue'],
  ])('%s → %s in the top 3', (query, id) => {
    expect(rankTools(query, CATALOG, 3).map((t) => t.id)).toContain(id);
  });

  it.each<[string, Searchable[], string]>([
    // A ticket key is an issue; a glued tool name meets two words of the request.
    ['comment on ENG-77 that QA passed', [{ id: 'linear__createcomment', description: 'Add a comment to an issue.', parameters: {} }, { id: 'cloudflare__env_var_set', description: 'Set an environment variable (dev, qa, prod).', parameters: {} }], 'linear__createcomment'],
    ['which data sources are wired into grafana', [{ id: 'grafana__list_datasources', description: 'List the configured sources.', parameters: {} }, { id: 'notion__list_data', description: 'List data.', parameters: {} }], 'grafana__list_datasources'],
    ['put a 👀 on the last message in #support', [{ id: 'slack__add_reaction', description: 'Add a reaction emoji to a message.', parameters: {} }, { id: 'cloudflare__kv_put', description: 'Put a value into a KV namespace.', parameters: {} }], 'slack__add_reaction'],
    ['find all the *.csv files under data/', [{ id: 'fs__search_files', description: 'Search for files matching a glob pattern.', parameters: {} }, { id: 'sheets__append_rows', description: 'Append rows to a CSV sheet.', parameters: {} }], 'fs__search_files'],
  ])('%s (the shape of a token counts)', (query, tools, id) => {
    expect(rankTools(query, tools, 1).map((t) => t.id)).toEqual([id]);
  });

  it.each<[string, Searchable[], string]>([
    // A word that begins a server's name names that server.
    ['find orders in mongo where status is stuck', [{ id: 'mongodb__find', description: 'Run a find query against a collection.', parameters: schema({ collection: 'Collection name', filter: 'The query filter' }) }, { id: 'shop__list_orders', description: 'List the orders with a status.', parameters: schema({ status: 'Order status' }) }], 'mongodb__find'],
    // Team speak for a tool name's verb: `kill` terminates, `kick off` triggers.
    ['kill the old staging box', [{ id: 'cloud__terminate_instance', description: 'Terminate a virtual machine.', parameters: schema({ name: 'Instance name' }) }, { id: 'cloud__list_instances', description: 'List virtual machines in staging or production.', parameters: {} }], 'cloud__terminate_instance'],
    ['kick off the nightly build', [{ id: 'ci__trigger_pipeline', description: 'Start a pipeline.', parameters: schema({ name: 'Pipeline (build) name' }) }, { id: 'ci__get_build_logs', description: 'Get the logs of a build.', parameters: {} }], 'ci__trigger_pipeline'],
  ])('%s (server names said short, team-speak verbs)', (query, tools, id) => {
    expect(rankTools(query, tools, 1).map((t) => t.id)).toEqual([id]);
  });

  it('a word one typo away from a known one is read as that word', () => {
    const tools: Searchable[] = [
      { id: 'cloudflare__r2_list_buckets', description: 'List R2 buckets.', parameters: {} },
      { id: 'cloudflare__r2_get_bucket', description: 'Get one R2 bucket.', parameters: {} },
    ];
    expect(rankTools('lsit the r2 buckets', tools, 1).map((t) => t.id)).toEqual(['cloudflare__r2_list_buckets']);
  });

  it('a request that names a server prefers its tools', () => {
    const tools: Searchable[] = [
      { id: 'cloudflare__queue_create', description: 'Create a new queue.', parameters: {} },
      { id: 'twilio__createqueue', description: 'Create a queue for calls.', parameters: {} },
    ];
    expect(rankTools('create a new hold queue on twilio', tools, 2).map((t) => t.id)).toEqual(['twilio__createqueue', 'cloudflare__queue_create']);
  });

  it('a word no tool uses reaches the tool whose word general English relates it to (`bill` → invoice), and only through that relation', () => {
    const tools: Searchable[] = [
      { id: 'acme__send_digest', description: 'Send a digest to a customer.', parameters: {} },
      { id: 'acme__send_invoice', description: 'Send an invoice to a customer.', parameters: {} },
    ];
    expect(rankTools('send the bill to the customer', tools, 2).map((t) => t.id)).toEqual(['acme__send_invoice', 'acme__send_digest']);
    const off = { ...DEFAULT_RANK_OPTIONS, wordnet: 0, wordnetReplaced: 0, rerank: undefined };
    expect(rankTools('send the bill to the customer', tools, 2, off).map((t) => t.id)).toEqual(['acme__send_digest', 'acme__send_invoice']);
  });

  it('a query with no usable words finds nothing', () => {
    expect(rankTools('the of a', CATALOG, 3)).toEqual([]);
  });

  it('returns at most `limit` tools, and none for a limit of 0', () => {
    expect(rankTools('pull request', CATALOG, 2)).toHaveLength(2);
    expect(rankTools('pull request', CATALOG, 0)).toEqual([]);
  });
});

/** A deterministic generator: the same cases on every run. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('only tools on the surface are ever found', () => {
  const QUERIES = ['which PRs are still waiting to be merged', 'bump the web frontend to 6 copies in prod', 'merge', 'page someone', 'list everything', 'pull request issue deployment incident page web', ...CATALOG.map((t) => t.id)];

  it('for random surfaces, every query (off-surface tool ids included), one search after another', () => {
    const next = random(31);
    for (let round = 0; round < 100; round++) {
      // A fresh definition object per turn, as the executor hands them, over the same schemas.
      const surface = CATALOG.filter(() => next() < 0.5).map((t) => ({ ...t }));
      const allowed = new Set(surface);
      for (const query of QUERIES) {
        for (const found of rankTools(query, surface, 50)) expect(allowed.has(found), `${query} found ${found.id} off the surface`).toBe(true);
      }
    }
  });

  it('with pseudo-relevance feedback on, still only the surface (the feedback terms come from it)', () => {
    const next = random(7);
    const options = { ...DEFAULT_RANK_OPTIONS, feedback: 0.3, feedbackDocs: 5, feedbackTerms: 8 };
    for (let round = 0; round < 50; round++) {
      const surface = CATALOG.filter(() => next() < 0.5).map((t) => ({ ...t }));
      const allowed = new Set(surface);
      for (const query of QUERIES) for (const found of rankTools(query, surface, 50, options)) expect(allowed.has(found), `${query} found ${found.id} off the surface`).toBe(true);
    }
  });

  it('with a learned table that sends every request word to every catalog word, still only the surface', () => {
    const next = random(11);
    const everyWord = [...new Set(CATALOG.flatMap((t) => terms(`${t.id} ${t.description}`)))].map((w) => [w, 0.5] as const);
    const translations = new Map(QUERIES.flatMap((q) => terms(q)).map((q) => [q, everyWord] as const));
    const options = { ...DEFAULT_RANK_OPTIONS, learned: 3, translations };
    for (let round = 0; round < 50; round++) {
      const surface = CATALOG.filter(() => next() < 0.5).map((t) => ({ ...t }));
      const allowed = new Set(surface);
      for (const query of QUERIES) for (const found of rankTools(query, surface, 50, options)) expect(allowed.has(found), `${query} found ${found.id} off the surface`).toBe(true);
    }
  });

  it('with the re-ranker given random (adversarial) weights, only the surface, and the first stage\'s tools in another order', () => {
    const next = random(17);
    const off = { ...DEFAULT_RANK_OPTIONS, rerank: undefined };
    for (let round = 0; round < 50; round++) {
      const surface = CATALOG.filter(() => next() < 0.5).map((t) => ({ ...t }));
      const allowed = new Set(surface);
      const weights = FEATURES.map(() => (next() - 0.5) * 1e6);
      const depth = 1 + Math.floor(next() * 40);
      const on = { ...DEFAULT_RANK_OPTIONS, rerank: { depth, weights } };
      for (const query of QUERIES) {
        const limit = 1 + Math.floor(next() * 12);
        const found = rankTools(query, surface, limit, on);
        for (const t of found) expect(allowed.has(t), `${query} found ${t.id} off the surface`).toBe(true);
        // A permutation of the first stage's best max(limit, depth): nothing new, nothing lost
        // when the whole of them is asked for.
        const first = rankTools(query, surface, Math.max(limit, depth), off);
        for (const t of found) expect(first).toContain(t);
        if (limit >= depth) expect(new Set(found)).toEqual(new Set(first.slice(0, limit)));
        // Warden's own tools and an exact id keep the places the first stage gave them.
        found.forEach((t, i) => {
          if (!t.id.includes('__') || t.id === query) expect(first[i]).toBe(t);
        });
      }
    }
  });

  it('a model whose weights do not fit the features is not applied (the first stage answers)', () => {
    const bad = { ...DEFAULT_RANK_OPTIONS, rerank: { depth: 30, weights: [1, 2, 3] } };
    const off = { ...DEFAULT_RANK_OPTIONS, rerank: undefined };
    for (const query of QUERIES.slice(0, 6)) expect(rankTools(query, CATALOG, 5, bad)).toEqual(rankTools(query, CATALOG, 5, off));
  });

  it('a surface searched after a larger one (its index cached) finds nothing the larger one had', () => {
    const all = CATALOG.map((t) => ({ ...t }));
    expect(rankTools('github__merge_pull_request', all, 5)[0]!.id).toBe('github__merge_pull_request');
    const without = all.filter((t) => !t.id.startsWith('github__'));
    for (const query of QUERIES) expect(rankTools(query, without, 50).filter((t) => t.id.startsWith('github__'))).toEqual([]);
    // The same ids with other definitions (a later turn): the answer is this turn's objects.
    const later = all.map((t) => ({ ...t }));
    const laterSet = new Set(later);
    for (const query of QUERIES) for (const found of rankTools(query, later, 50)) expect(laterSet.has(found)).toBe(true);
  });

  it('a tool whose description changed is indexed again', () => {
    const tools = CATALOG.map((t) => ({ ...t }));
    expect(rankTools('zebra', tools, 3)).toEqual([]);
    const changed = tools.map((t) => (t.id === 'confluence__get_page' ? { ...t, description: 'Get a zebra.' } : t));
    expect(rankTools('zebra', changed, 3).map((t) => t.id)).toEqual(['confluence__get_page']);
  });

  it('an empty surface finds nothing, even for a known id', () => {
    expect(rankTools('github__list_pull_requests', [], 5)).toEqual([]);
  });

  it('the defaults are frozen (a caller cannot retune every turn by accident)', () => {
    expect(Object.isFrozen(DEFAULT_RANK_OPTIONS)).toBe(true);
  });
});
