import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
/**
 * The web chat's one page. Plain HTML, CSS and a small script with no build step. Text from the
 * server is inserted with `textContent`, except message bodies: their Markdown is rendered by
 * markdown-it with HTML off and the result kept only through an element and URL allowlist.
 */

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Warden</title>
<link rel="stylesheet" href="/app.css">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<script src="/markdown-it.js" defer></script>
<script src="/app.js" defer></script>
</head>
<body>
<header><h1>Warden</h1><span id="status" data-state="connecting">connecting…</span><span id="session" title="This conversation's session; /new starts a fresh one"></span></header>
<div id="body">
<main id="messages" aria-live="polite"></main>
<aside id="pending" aria-label="Waiting for a decision" hidden>
  <h2>Waiting for a decision (<span id="pending-count">0</span>)</h2>
  <div id="pending-list"></div>
</aside>
</div>
<div id="typing" hidden>Warden is working…</div>
<div id="attachments" aria-label="Files to send" hidden></div>
<form id="composer" autocomplete="off">
  <input id="file-input" type="file" multiple hidden>
  <button id="attach" type="button" title="Attach files (or paste, or drop them here)" aria-label="Attach files">Attach</button>
  <textarea id="input" name="text" rows="2" placeholder="Message Warden, or /help; paste or drop files" aria-label="Message"></textarea>
  <button id="send" type="submit">Send</button>
</form>
</body>
</html>
`;

export const PAGE_CSS = `
.msg .file img { display: block; max-width: 100%; max-height: 24em; margin: .3em 0; border-radius: 4px; }
.msg .file audio { display: block; margin: .3em 0; }
.msg.md > :first-child { margin-top: 0; }
.msg.md > :last-child { margin-bottom: 0; }
.msg.md { white-space: normal; }
.msg.md p { margin: 0.4em 0; }
.msg.md table { border-collapse: collapse; margin: 0.4em 0; }
.msg.md th, .msg.md td { border: 1px solid #ccc; padding: 2px 6px; }
.msg.md .align-left { text-align: left; }
.msg.md .align-right { text-align: right; }
.msg.md .align-center { text-align: center; }
.welcome { align-self: stretch; border: 1px solid #8886; border-left: 4px solid var(--accent); border-radius: 8px; padding: .6em .9em; }
.welcome h2 { font-size: 1.05em; margin: 0 0 .4em; }
.welcome p { margin: .3em 0; }
.welcome ul { margin: .2em 0; padding-left: 1.2em; }
.welcome button.try { font: inherit; font-family: monospace; cursor: pointer; }
.msg.md code { background: rgba(0,0,0,0.06); padding: 0 3px; border-radius: 3px; }
.msg.md pre code { background: none; padding: 0; }
:root { color-scheme: light dark; --accent: #5865f2; --ok: #2e9e5b; --bad: #d83c3e; --muted: #8a8f98; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; display: flex; flex-direction: column; height: 100vh; }
header { display: flex; align-items: baseline; gap: 1em; padding: .5em 1em; border-bottom: 1px solid #8884; }
header h1 { font-size: 1.1em; margin: 0; }
#status { color: var(--muted); font-size: .85em; }
#status[data-state="open"] { color: var(--ok); }
#status[data-state="closed"] { color: var(--bad); }
#session { margin-left: auto; color: var(--muted); font-size: .8em; font-family: ui-monospace, monospace; }
#body { flex: 1; display: flex; min-height: 0; }
main { flex: 1; overflow-y: auto; padding: 1em; display: flex; flex-direction: column; gap: .6em; }
#pending { width: 24em; max-width: 40%; overflow-y: auto; border-left: 1px solid #8884; padding: .6em .8em; }
#pending h2 { font-size: .95em; margin: 0 0 .5em; }
#pending .item { border: 1px solid #8886; border-left: 4px solid #faa61a; border-radius: 6px; padding: .4em .6em; margin-bottom: .6em; font-size: .9em; }
#pending .item h3 { font-size: 1em; margin: 0 0 .2em; }
#pending .item pre { margin: .2em 0; padding: .3em; background: #0003; border-radius: 4px; overflow-x: auto; max-height: 8em; }
#pending .item .who { color: var(--muted); }
#pending .buttons, .msg .actions { display: flex; gap: .4em; margin-top: .3em; flex-wrap: wrap; }
#pending button, .msg .actions button { border: 0; border-radius: 4px; padding: .3em .7em; color: #fff; cursor: pointer; background: var(--accent); }
#pending button[data-decision="allow-once"] { background: var(--ok); }
#pending button[data-decision="deny"] { background: var(--bad); }
.msg[data-state] .state { display: block; font-size: .8em; color: var(--muted); margin-top: .2em; }
.msg[data-state="unsent"] { outline: 1px solid var(--bad); }
.msg[data-state="unsent"] .state { color: var(--bad); }
.msg { max-width: 80ch; padding: .5em .75em; border-radius: 8px; white-space: pre-wrap; word-break: break-word; }
.msg.user { align-self: flex-end; background: #5865f233; }
.msg.bot { align-self: flex-start; background: #8882; }
.msg.notice { align-self: center; color: var(--muted); font-size: .9em; background: none; }
.msg pre { margin: .3em 0; padding: .5em; background: #0003; border-radius: 4px; overflow-x: auto; white-space: pre; }
.card { align-self: flex-start; max-width: 90ch; border: 1px solid #8886; border-left: 4px solid #faa61a; border-radius: 8px; padding: .6em .8em; }
.card[data-status="allow-once"], .card[data-status="allow-always"] { border-left-color: var(--ok); }
.card[data-status="deny"] { border-left-color: var(--bad); }
.card[data-status="expired"], .card[data-status="cancelled"], .card[data-status="interrupted"] { border-left-color: var(--muted); }
.card h2 { font-size: 1em; margin: 0 0 .3em; }
.card pre { margin: .3em 0; padding: .5em; background: #0003; border-radius: 4px; overflow-x: auto; }
.card dl { display: grid; grid-template-columns: max-content 1fr; gap: .1em .8em; margin: .3em 0; font-size: .9em; }
.card dt { color: var(--muted); }
.card dd { margin: 0; }
.card .buttons { display: flex; gap: .5em; margin-top: .4em; }
.card button { border: 0; border-radius: 4px; padding: .35em .9em; color: #fff; cursor: pointer; }
.card button[data-decision="allow-once"] { background: var(--ok); }
.card button[data-decision="allow-always"] { background: var(--accent); }
.card button[data-decision="deny"], .card button[data-decision="deny-with-reason"] { background: var(--bad); }
.card .reason { display: flex; gap: .5em; margin-top: .4em; }
.card .reason input { flex: 1; }
.card .progress { font-weight: 600; margin-top: .3em; }
.card .outcome { font-weight: 600; margin-top: .3em; }
.msg.under-card { margin-left: 1.5em; border-left: 3px solid #8886; border-radius: 0 8px 8px 0; }
#typing { padding: 0 1em .3em; color: var(--muted); font-size: .85em; }
form { display: flex; gap: .5em; padding: .6em 1em; border-top: 1px solid #8884; }
textarea { flex: 1; font: inherit; padding: .4em; resize: vertical; }
form button { padding: 0 1.2em; }
#attach { padding: 0 .8em; }
#attachments[hidden] { display: none; }
#attachments { display: flex; gap: .4em; flex-wrap: wrap; padding: .4em 1em 0; }
#attachments .chip { font-size: .85em; border: 1px solid #8886; border-radius: 12px; padding: .1em .6em; }
#attachments .chip[data-state="uploading"] { color: var(--muted); }
#attachments .chip button { border: 0; background: none; cursor: pointer; color: var(--muted); }
body.dropping form { outline: 2px dashed var(--accent); }
`;

export const PAGE_JS = `
'use strict';
(() => {
  const list = document.getElementById('messages');
  const input = document.getElementById('input');
  const form = document.getElementById('composer');
  const statusEl = document.getElementById('status');
  const sessionEl = document.getElementById('session');
  const typingEl = document.getElementById('typing');
  const pendingEl = document.getElementById('pending');
  const pendingList = document.getElementById('pending-list');
  const pendingCount = document.getElementById('pending-count');
  const fileInput = document.getElementById('file-input');
  const attachButton = document.getElementById('attach');
  const attachmentsEl = document.getElementById('attachments');
  /** Files uploaded for the next message: {id, name, mimeType, bytes}; uploads still on their way count as busy. */
  let attached = [];
  let uploading = 0;
  const cards = new Map();
  /** Page messages by id: the bubble of each message this tab sent. */
  const bubbles = new Map();
  const OUTBOX_KEY = 'warden-outbox';
  /**
   * Messages typed here and not yet acknowledged by the server, oldest first, kept in the tab's
   * session storage: {id, text, state: queued|sending|unsent, reason}. Each carries its id to
   * the server, which runs an id once however often it arrives.
   */
  let outbox = loadOutbox();
  let socket;
  let retry = 500;
  let connected = false;

  function loadOutbox() {
    try {
      const value = JSON.parse(sessionStorage.getItem(OUTBOX_KEY) || '[]');
      if (!Array.isArray(value)) return [];
      // A message that was on its way when the tab left goes again (the server runs an id once).
      return value
        .filter((m) => m && typeof m.id === 'string' && typeof m.text === 'string')
        .map((m) => ({ ...(m.state === 'unsent' ? m : { id: m.id, text: m.text, state: 'queued' }), files: Array.isArray(m.files) ? m.files : [] }));
    } catch (err) {
      return [];
    }
  }

  function saveOutbox() {
    try {
      sessionStorage.setItem(OUTBOX_KEY, JSON.stringify(outbox));
    } catch (err) {
      // Storage full or off: the queue still lives in this page.
    }
  }

  function newId() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  }

  function setStatus(state, text) {
    statusEl.dataset.state = state;
    statusEl.textContent = text;
  }

  function waitingNote() {
    const waiting = outbox.filter((m) => m.state !== 'unsent').length;
    return waiting > 0 ? ' (' + waiting + ' waiting to send)' : '';
  }

  function scrollDown() {
    list.scrollTop = list.scrollHeight;
  }

  /**
   * Markdown through markdown-it with HTML off: the model's (or anyone's) tags are shown as
   * text. Its output is parsed in an inert <template> and kept only if every element is on the
   * allowlist; links keep http(s) and mailto targets (anything else becomes its text) and open
   * in a new tab without a referrer; images are shown as their links (the page loads nothing
   * from elsewhere). Without the library the text is shown as text.
   */
  const md = window.markdownit ? window.markdownit({ html: false, linkify: true, breaks: true }) : undefined;
  // markdown-it aligns table columns with style="text-align:…", which the page's CSP refuses
  // (a console error per cell, and no alignment): the cells carry a class instead, before any HTML is made.
  if (md) md.core.ruler.push('align_classes', (state) => {
    for (const token of state.tokens) {
      if (token.type !== 'th_open' && token.type !== 'td_open') continue;
      const m = /^text-align:(left|right|center)$/.exec(token.attrGet('style') || '');
      token.attrs = m ? [['class', 'align-' + m[1]]] : null;
    }
  });
  const ALLOWED = new Set(['P', 'BR', 'STRONG', 'EM', 'S', 'DEL', 'CODE', 'PRE', 'BLOCKQUOTE', 'UL', 'OL', 'LI', 'A', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'HR', 'TABLE', 'THEAD', 'TBODY', 'TR', 'TH', 'TD']);
  const KEPT_ATTRS = { A: ['href'], OL: ['start'], CODE: ['class'] };
  function safeHref(href) {
    try {
      const url = new URL(href, location.href);
      return url.protocol === 'https:' || url.protocol === 'http:' || url.protocol === 'mailto:' ? url.href : undefined;
    } catch (e) {
      return undefined;
    }
  }
  function sanitize(root) {
    for (const el of Array.from(root.querySelectorAll('*'))) {
      if (el.tagName === 'IMG') {
        const a = document.createElement('a');
        a.setAttribute('href', el.getAttribute('src') || '');
        a.textContent = el.getAttribute('alt') || el.getAttribute('src') || 'image';
        el.replaceWith(a);
      }
    }
    for (const el of Array.from(root.querySelectorAll('*'))) {
      if (!ALLOWED.has(el.tagName)) {
        el.replaceWith(document.createTextNode(el.textContent || ''));
        continue;
      }
      const keep = KEPT_ATTRS[el.tagName] || [];
      // A table column's alignment (set as a class by the renderer above) is the only class a cell keeps.
      const align = (el.tagName === 'TH' || el.tagName === 'TD') && /^align-(left|right|center)$/.exec(el.getAttribute('class') || '');
      for (const attr of Array.from(el.attributes)) if (!keep.includes(attr.name)) el.removeAttribute(attr.name);
      if (el.hasAttribute('class') && !/^language-[\\w-]+$/.test(el.getAttribute('class'))) el.removeAttribute('class');
      if (align) el.className = 'align-' + align[1];
      if (el.tagName === 'A') {
        const href = safeHref(el.getAttribute('href') || '');
        if (!href) {
          el.replaceWith(document.createTextNode(el.textContent || ''));
          continue;
        }
        el.setAttribute('href', href);
        el.setAttribute('rel', 'noopener noreferrer nofollow');
        el.setAttribute('target', '_blank');
      }
    }
    return root;
  }
  /** The line breaks markdown-it writes between tags are layout, not text. */
  function tidy(root) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const drop = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.parentElement && n.parentElement.closest('pre')) {
        if (!n.nextSibling && n.parentElement.tagName === 'CODE') n.textContent = n.textContent.replace(/\\n$/, '');
        continue;
      }
      if (/^\\n+$/.test(n.textContent)) drop.push(n);
    }
    for (const n of drop) n.remove();
    return root;
  }
  function renderText(el, text, role) {
    if (md && role === 'bot') {
      const template = document.createElement('template');
      template.innerHTML = md.render(text);
      el.classList.add('md');
      el.appendChild(tidy(sanitize(template.content)));
      return;
    }
    renderPlain(el, text);
  }

  /** Text with fenced code blocks shown as <pre>; everything inserted as text. */
  function renderPlain(el, text) {
    const parts = text.split(/\\n?\`\`\`[^\\n]*\\n?/);
    parts.forEach((part, i) => {
      if (part === '') return;
      if (i % 2 === 1) {
        const pre = document.createElement('pre');
        pre.textContent = part;
        el.appendChild(pre);
      } else {
        el.appendChild(document.createTextNode(part));
      }
    });
  }

  function messageEl(role, text) {
    const el = document.createElement('div');
    el.className = 'msg ' + role;
    el.dataset.role = role;
    renderText(el, text, role);
    return el;
  }

  /** Bubbles of replies being written, by stream id; the final message takes their place. */
  const streams = new Map();

  function showStream(id, text) {
    let el = streams.get(id);
    if (text === '') {
      if (el) el.remove();
      streams.delete(id);
      return;
    }
    if (!el) {
      el = messageEl('bot', '');
      el.classList.add('streaming');
      streams.set(id, el);
      list.appendChild(el);
    }
    el.replaceChildren();
    renderText(el, text, 'bot');
    scrollDown();
  }

  /** Files of a reply: raster images inline, audio with controls, anything else a download link. */
  function addFiles(el, files) {
    for (const f of files || []) {
      if (typeof f.url !== 'string' || !/^\\/files\\/[0-9a-f]{24}$/.test(f.url)) continue;
      const box = document.createElement('div');
      box.className = 'file';
      if (/^image\\/(png|jpeg|gif|webp)$/.test(f.mimeType)) {
        const img = document.createElement('img');
        img.src = f.url;
        img.alt = f.name;
        box.appendChild(img);
      } else if (/^audio\\//.test(f.mimeType)) {
        const audio = document.createElement('audio');
        audio.controls = true;
        audio.src = f.url;
        box.appendChild(audio);
      }
      const a = document.createElement('a');
      a.href = f.url;
      a.download = f.name;
      a.textContent = f.name;
      box.appendChild(a);
      el.appendChild(box);
    }
  }

  function addMessage(m) {
    // This tab's own message coming back from the server: its bubble is already here.
    if (m.role === 'user' && m.id && bubbles.has(m.id)) return;
    const el = messageEl(m.role, m.text);
    addFiles(el, m.files);
    const streamed = m.streamId ? streams.get(m.streamId) : undefined;
    if (streamed) {
      streams.delete(m.streamId);
      streamed.replaceWith(el);
      scrollDown();
      return;
    }
    if (m.id) {
      el.dataset.id = m.id;
      bubbles.set(m.id, el);
    }
    // An approval's outcome goes under its card, after any earlier ones of the same card.
    let anchor = m.approvalId ? cards.get(m.approvalId) : undefined;
    if (anchor) {
      el.classList.add('under-card');
      el.dataset.approvalId = m.approvalId;
      while (anchor.nextElementSibling && anchor.nextElementSibling.classList.contains('under-card') && anchor.nextElementSibling.dataset.approvalId === m.approvalId) anchor = anchor.nextElementSibling;
      anchor.after(el);
    } else {
      list.appendChild(el);
    }
    scrollDown();
  }

  const STATE_TEXT = { queued: 'not sent yet: waiting for the connection', sending: 'sending…' };

  /** Shows (or moves to the end) the bubble of a message from the outbox, with its state. */
  function showQueued(entry) {
    let el = bubbles.get(entry.id);
    if (!el) {
      el = messageEl('user', entry.text);
      addFiles(el, (entry.files || []).map((f) => ({ url: '/files/' + f.id, name: f.name, mimeType: f.mimeType })));
      el.dataset.id = entry.id;
      bubbles.set(entry.id, el);
    }
    el.dataset.state = entry.state;
    el.querySelectorAll('.state, .actions').forEach((x) => x.remove());
    const note = document.createElement('span');
    note.className = 'state';
    note.textContent = entry.state === 'unsent' ? 'not sent: ' + (entry.reason || 'the server did not take it') : STATE_TEXT[entry.state] || '';
    el.appendChild(note);
    if (entry.state === 'unsent') {
      const actions = document.createElement('div');
      actions.className = 'actions';
      const again = document.createElement('button');
      again.type = 'button';
      again.dataset.action = 'resend';
      again.textContent = 'Send again';
      again.addEventListener('click', () => {
        entry.state = 'queued';
        delete entry.reason;
        saveOutbox();
        showQueued(entry);
        flush();
      });
      const edit = document.createElement('button');
      edit.type = 'button';
      edit.dataset.action = 'edit';
      edit.textContent = 'Edit';
      edit.addEventListener('click', () => {
        outbox = outbox.filter((m) => m !== entry);
        saveOutbox();
        bubbles.delete(entry.id);
        el.remove();
        input.value = entry.text;
        attached = entry.files || [];
        renderAttachments();
        input.focus();
      });
      actions.append(again, edit);
      el.appendChild(actions);
    }
    if (!el.isConnected) list.appendChild(el);
    scrollDown();
  }

  function markSent(id) {
    const el = bubbles.get(id);
    if (el) {
      delete el.dataset.state;
      el.querySelectorAll('.state, .actions').forEach((x) => x.remove());
    }
    outbox = outbox.filter((m) => m.id !== id);
    saveOutbox();
  }

  /** Sends what waits, in the order it was typed, once per connection; only on an open, synced one. */
  function flush() {
    if (!connected || !socket || socket.readyState !== WebSocket.OPEN) return;
    for (const entry of outbox) {
      if (entry.state !== 'queued') continue;
      entry.state = 'sending';
      showQueued(entry);
      const files = (entry.files || []).map((f) => f.id);
      socket.send(JSON.stringify({ type: 'message', id: entry.id, text: entry.text, ...(files.length > 0 ? { files } : {}) }));
    }
    saveOutbox();
  }

  function cardBody(el, card, withFacts) {
    const pre = document.createElement('pre');
    pre.textContent = card.fullText;
    el.appendChild(pre);
    const dl = document.createElement('dl');
    for (const f of card.facts) {
      const dt = document.createElement('dt');
      dt.textContent = f.label;
      const dd = document.createElement('dd');
      if (typeof f.at === 'number') {
        // The viewer's own locale and time zone; the ISO time on hover and for machines.
        const time = document.createElement('time');
        time.dateTime = f.value;
        time.title = f.value;
        time.textContent = new Date(f.at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
        dd.appendChild(time);
      } else {
        dd.textContent = f.value;
      }
      dl.append(dt, dd);
    }
    if (withFacts) el.appendChild(dl);
    if (card.status === 'pending') {
      const row = document.createElement('div');
      row.className = 'buttons';
      for (const b of card.buttons) {
        const button = document.createElement('button');
        button.type = 'button';
        button.dataset.decision = b.decision;
        button.textContent = b.label;
        button.addEventListener('click', () => {
          row.querySelectorAll('button').forEach((x) => { x.disabled = true; });
          send({ type: 'approve', id: card.id, decision: b.decision });
        });
        row.appendChild(button);
      }
      el.appendChild(row);
      if (card.denyWithReason) {
        // Deny with reason: the reason is typed here and sent with the deny.
        const form = document.createElement('div');
        form.className = 'reason';
        const input = document.createElement('input');
        input.type = 'text';
        input.className = 'reason-text';
        input.maxLength = 500;
        input.placeholder = 'Why deny? (the agent is told)';
        const button = document.createElement('button');
        button.type = 'button';
        button.dataset.decision = 'deny-with-reason';
        button.textContent = 'Deny with reason';
        button.addEventListener('click', () => {
          if (input.value.trim() === '') { input.focus(); return; }
          row.querySelectorAll('button').forEach((x) => { x.disabled = true; });
          button.disabled = true;
          send({ type: 'approve', id: card.id, decision: 'deny', reason: input.value });
        });
        form.append(input, button);
        el.appendChild(form);
      }
    }
    for (const line of card.progress || []) {
      const p = document.createElement('div');
      p.className = 'progress';
      p.textContent = line;
      el.appendChild(p);
    }
  }

  function renderCard(card) {
    let el = cards.get(card.id);
    if (!el) {
      el = document.createElement('section');
      el.className = 'card';
      el.dataset.approvalId = card.id;
      cards.set(card.id, el);
      list.appendChild(el);
    }
    el.dataset.status = card.status;
    el.replaceChildren();
    const h = document.createElement('h2');
    h.textContent = card.title;
    el.appendChild(h);
    cardBody(el, card, true);
    if (card.status !== 'pending') {
      const outcome = document.createElement('div');
      outcome.className = 'outcome';
      outcome.textContent = card.outcome;
      el.appendChild(outcome);
    }
    scrollDown();
  }

  /** The panel of requests waiting for a decision, as the server lists them. */
  function renderPending(pending) {
    pendingList.replaceChildren();
    for (const card of pending) {
      const item = document.createElement('div');
      item.className = 'item';
      item.dataset.approvalId = card.id;
      const h = document.createElement('h3');
      h.textContent = card.title;
      item.appendChild(h);
      const who = card.facts.find((f) => f.label === 'Requested by');
      if (who) {
        const line = document.createElement('div');
        line.className = 'who';
        line.textContent = 'Requested by ' + who.value;
        item.appendChild(line);
      }
      cardBody(item, card, false);
      pendingList.appendChild(item);
    }
    pendingCount.textContent = String(pending.length);
    pendingEl.hidden = pending.length === 0;
  }

  function send(frame) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
  }

  /** Whether the server still takes this page's token (a closed socket does not say). */
  async function tokenRefused() {
    try {
      const response = await fetch('/healthz', { cache: 'no-store' });
      return response.status === 401 || response.status === 403;
    } catch (err) {
      return false;
    }
  }

  function connect() {
    const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws';
    socket = new WebSocket(url);
    socket.addEventListener('open', () => { retry = 500; setStatus('open', 'connected'); });
    socket.addEventListener('close', async () => {
      connected = false;
      setStatus('closed', 'disconnected — retrying' + waitingNote());
      if (outbox.some((m) => m.state !== 'unsent') && (await tokenRefused())) {
        const reason = 'the server no longer accepts this page’s token; open the address Warden printed';
        for (const entry of outbox) if (entry.state !== 'unsent') { entry.state = 'unsent'; entry.reason = reason; showQueued(entry); }
        saveOutbox();
        setStatus('closed', 'disconnected: ' + reason);
      } else {
        for (const entry of outbox) if (entry.state === 'sending') { entry.state = 'queued'; showQueued(entry); }
        saveOutbox();
      }
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 5000);
    });
    socket.addEventListener('message', (event) => {
      const frame = JSON.parse(event.data);
      switch (frame.type) {
        case 'history':
          list.replaceChildren();
          streams.clear();
          cards.clear();
          bubbles.clear();
          sessionEl.textContent = frame.session || '';
          if (frame.items.length === 0 && frame.welcome) list.appendChild(welcomeEl(frame.welcome));
          for (const item of frame.items) item.kind === 'card' ? renderCard(item.card) : addMessage(item.message);
          // What the server already has arrived, whatever became of its acknowledgement.
          outbox = outbox.filter((m) => !bubbles.has(m.id));
          for (const entry of outbox) {
            if (entry.state === 'sending') entry.state = 'queued';
            showQueued(entry);
          }
          connected = true;
          flush();
          break;
        case 'message':
          addMessage(frame.message);
          break;
        case 'ack': {
          const entry = outbox.find((m) => m.id === frame.id);
          if (frame.status === 'refused') {
            if (entry) { entry.state = 'unsent'; entry.reason = frame.reason; showQueued(entry); saveOutbox(); }
          } else {
            markSent(frame.id);
          }
          break;
        }
        case 'card':
          renderCard(frame.card);
          break;
        case 'pending':
          renderPending(frame.cards);
          break;
        case 'typing':
          typingEl.hidden = !frame.on;
          break;
        case 'stream':
          showStream(frame.id, frame.text);
          break;
        case 'secret':
          showSecretForm(frame.prompt);
          break;
        case 'question':
          showQuestion(frame.prompt);
          break;
        case 'question-answered': {
          const el = document.querySelector('[data-question="' + frame.id + ':' + frame.question + '"]');
          if (el) { const p = document.createElement('p'); p.className = 'question-answered'; p.textContent = frame.summary; el.replaceWith(p); }
          break;
        }
      }
    });
  }

  /** Text with \`code\` spans, inserted as text. */
  function withCode(el, text) {
    text.split('\`').forEach((part, i) => {
      if (i % 2 === 1) { const code = document.createElement('code'); code.textContent = part; el.appendChild(code); }
      else if (part) el.appendChild(document.createTextNode(part));
    });
    return el;
  }
  /** The empty page's card: the model (or the line that adds one), the workspace, commands to try (a click puts one in the box). */
  function welcomeEl(w) {
    const el = document.createElement('section');
    el.className = 'welcome';
    const h = document.createElement('h2');
    h.textContent = 'Welcome to Warden';
    el.appendChild(h);
    el.appendChild(withCode(document.createElement('p'), w.model)).className = 'model';
    el.appendChild(withCode(document.createElement('p'), w.workspace)).className = 'workspace';
    const p = document.createElement('p');
    p.textContent = 'Try:';
    el.appendChild(p);
    const ul = document.createElement('ul');
    for (const t of w.try) {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'try';
      b.textContent = t.command;
      b.addEventListener('click', () => { input.value = t.command; input.focus(); });
      li.appendChild(b);
      li.appendChild(document.createTextNode(' ' + t.what));
      ul.appendChild(li);
    }
    el.appendChild(ul);
    return el;
  }
  // The secrets tool's form: a password field whose value goes to the server in one frame and
  // is cleared at once; it is never shown, kept in the outbox or written to the history.
  function showSecretForm(prompt) {
    const form = document.createElement('form');
    form.className = 'secret-form';
    const label = document.createElement('label');
    label.textContent = 'The assistant asks for the secret ' + prompt.name + ': ' + prompt.reason + ' (it never sees the value)';
    const input = document.createElement('input');
    input.type = 'password';
    input.autocomplete = 'off';
    input.required = true;
    const button = document.createElement('button');
    button.type = 'submit';
    button.textContent = 'Save ' + prompt.name;
    form.append(label, input, button);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      send({ type: 'secret', id: prompt.id, value: input.value });
      input.value = '';
      form.remove();
    });
    list.appendChild(form);
    input.focus();
  }

  // The ask_user tool's questions: a button per option, and a text field for any other answer.
  function showQuestion(prompt) {
    prompt.questions.forEach((q, i) => {
      const form = document.createElement('form');
      form.className = 'question-form';
      form.dataset.question = prompt.id + ':' + i;
      const label = document.createElement('p');
      label.textContent = 'The assistant asks' + (prompt.questions.length > 1 ? ' (' + (i + 1) + '/' + prompt.questions.length + ')' : '') + ' — ' + q.header + ': ' + q.question;
      form.appendChild(label);
      q.options.forEach((o, j) => {
        const b = document.createElement('button');
        b.type = 'button';
        b.className = 'question-option';
        b.textContent = o.label;
        if (o.description) b.title = o.description;
        b.addEventListener('click', () => send({ type: 'answer', id: prompt.id, question: i, option: j }));
        form.appendChild(b);
      });
      const other = document.createElement('input');
      other.type = 'text';
      other.placeholder = 'Other…';
      other.maxLength = 1000;
      const submit = document.createElement('button');
      submit.type = 'submit';
      submit.textContent = 'Answer';
      form.append(other, submit);
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        if (other.value.trim() !== '') send({ type: 'answer', id: prompt.id, question: i, value: other.value });
      });
      list.appendChild(form);
    });
    scrollDown();
  }

  function notice(text) {
    list.appendChild(messageEl('notice', text));
    scrollDown();
  }

  function renderAttachments() {
    attachmentsEl.replaceChildren();
    for (const f of attached) {
      const chip = document.createElement('span');
      chip.className = 'chip';
      chip.dataset.fileId = f.id;
      chip.textContent = f.name + ' ';
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.textContent = '×';
      remove.setAttribute('aria-label', 'Remove ' + f.name);
      remove.addEventListener('click', () => { attached = attached.filter((x) => x !== f); renderAttachments(); });
      chip.appendChild(remove);
      attachmentsEl.appendChild(chip);
    }
    if (uploading > 0) {
      const busy = document.createElement('span');
      busy.className = 'chip';
      busy.dataset.state = 'uploading';
      busy.textContent = 'uploading ' + uploading + '…';
      attachmentsEl.appendChild(busy);
    }
    attachmentsEl.hidden = attached.length === 0 && uploading === 0;
  }

  /** Uploads one file (the token travels in the page's cookie); the server answers its id or why not. */
  async function uploadFile(file) {
    uploading++;
    renderAttachments();
    try {
      const res = await fetch('/upload?name=' + encodeURIComponent(file.name || 'pasted'), { method: 'POST', headers: { 'content-type': file.type || 'application/octet-stream' }, body: file });
      const body = await res.json().catch(() => ({}));
      if (!res.ok || typeof body.id !== 'string') notice('Not attached: ' + (body.error || (file.name + ': the server answered ' + res.status)));
      else attached.push({ id: body.id, name: body.name, mimeType: body.mimeType, bytes: body.bytes });
    } catch (err) {
      notice('Not attached: ' + file.name + ' could not be uploaded (' + err.message + ')');
    } finally {
      uploading--;
      renderAttachments();
    }
  }

  function uploadAll(files) {
    for (const file of Array.from(files || [])) void uploadFile(file);
  }

  attachButton.addEventListener('click', () => fileInput.click());
  fileInput.addEventListener('change', () => { uploadAll(fileInput.files); fileInput.value = ''; });
  input.addEventListener('paste', (event) => {
    const files = event.clipboardData ? event.clipboardData.files : undefined;
    if (files && files.length > 0) {
      event.preventDefault();
      uploadAll(files);
    }
  });
  document.addEventListener('dragover', (event) => {
    if (event.dataTransfer && Array.from(event.dataTransfer.types || []).includes('Files')) {
      event.preventDefault();
      document.body.classList.add('dropping');
    }
  });
  document.addEventListener('dragleave', () => document.body.classList.remove('dropping'));
  document.addEventListener('drop', (event) => {
    document.body.classList.remove('dropping');
    if (!event.dataTransfer || event.dataTransfer.files.length === 0) return;
    event.preventDefault();
    uploadAll(event.dataTransfer.files);
  });

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (uploading > 0) { notice('Wait for the files to finish uploading.'); return; }
    if (text === '' && attached.length === 0) return;
    const entry = { id: newId(), text, state: 'queued', files: attached };
    attached = [];
    renderAttachments();
    outbox.push(entry);
    saveOutbox();
    showQueued(entry);
    if (!connected) setStatus('closed', 'disconnected — retrying' + waitingNote());
    flush();
    input.value = '';
    input.focus();
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  connect();
})();
`;

let markdownIt: string | undefined;
/**
 * markdown-it's browser build, served from the installed package (no CDN: the page loads nothing
 * from elsewhere); read at the first page that asks for it, so a bot nobody opened does not hold it.
 */
export function markdownItJs(): string {
  markdownIt ??= readFileSync(createRequire(import.meta.url).resolve('markdown-it/dist/markdown-it.min.js'), 'utf8');
  return markdownIt;
}

/** A shield, in the page's accent colour. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M16 2 4 6v9c0 7.5 5.1 13.4 12 15 6.9-1.6 12-7.5 12-15V6z" fill="#3b6fd8"/><path d="M11 16.5l3.5 3.5L21.5 12" stroke="#fff" stroke-width="2.6" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>`;
