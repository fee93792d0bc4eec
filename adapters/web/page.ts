/**
 * The web chat's one page. Plain HTML, CSS and a small script with no build step; every piece
 * of text from the server is inserted with `textContent`, never as HTML.
 */

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Warden</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<header><h1>Warden</h1><span id="status" data-state="connecting">connecting…</span></header>
<main id="messages" aria-live="polite"></main>
<div id="typing" hidden>Warden is working…</div>
<form id="composer" autocomplete="off">
  <textarea id="input" name="text" rows="2" placeholder="Message Warden, or /help" aria-label="Message"></textarea>
  <button id="send" type="submit">Send</button>
</form>
</body>
</html>
`;

export const PAGE_CSS = `
:root { color-scheme: light dark; --accent: #5865f2; --ok: #2e9e5b; --bad: #d83c3e; --muted: #8a8f98; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; display: flex; flex-direction: column; height: 100vh; }
header { display: flex; align-items: baseline; gap: 1em; padding: .5em 1em; border-bottom: 1px solid #8884; }
header h1 { font-size: 1.1em; margin: 0; }
#status { color: var(--muted); font-size: .85em; }
#status[data-state="open"] { color: var(--ok); }
#status[data-state="closed"] { color: var(--bad); }
main { flex: 1; overflow-y: auto; padding: 1em; display: flex; flex-direction: column; gap: .6em; }
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
.card button[data-decision="deny"] { background: var(--bad); }
.card .outcome { font-weight: 600; margin-top: .3em; }
#typing { padding: 0 1em .3em; color: var(--muted); font-size: .85em; }
form { display: flex; gap: .5em; padding: .6em 1em; border-top: 1px solid #8884; }
textarea { flex: 1; font: inherit; padding: .4em; resize: vertical; }
form button { padding: 0 1.2em; }
`;

export const PAGE_JS = `
'use strict';
(() => {
  const list = document.getElementById('messages');
  const input = document.getElementById('input');
  const form = document.getElementById('composer');
  const statusEl = document.getElementById('status');
  const typingEl = document.getElementById('typing');
  const cards = new Map();
  let socket;
  let retry = 500;

  function setStatus(state, text) {
    statusEl.dataset.state = state;
    statusEl.textContent = text;
  }

  function scrollDown() {
    list.scrollTop = list.scrollHeight;
  }

  /** Text with fenced code blocks shown as <pre>; everything inserted as text. */
  function renderText(el, text) {
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

  function addMessage(m) {
    const el = document.createElement('div');
    el.className = 'msg ' + m.role;
    el.dataset.role = m.role;
    renderText(el, m.text);
    list.appendChild(el);
    scrollDown();
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
    const pre = document.createElement('pre');
    pre.textContent = card.fullText;
    el.appendChild(pre);
    const dl = document.createElement('dl');
    for (const f of card.facts) {
      const dt = document.createElement('dt');
      dt.textContent = f.label;
      const dd = document.createElement('dd');
      dd.textContent = f.value;
      dl.append(dt, dd);
    }
    el.appendChild(dl);
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
    } else {
      const outcome = document.createElement('div');
      outcome.className = 'outcome';
      outcome.textContent = card.outcome;
      el.appendChild(outcome);
    }
    scrollDown();
  }

  function send(frame) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
  }

  function connect() {
    const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws';
    socket = new WebSocket(url);
    socket.addEventListener('open', () => { retry = 500; setStatus('open', 'connected'); });
    socket.addEventListener('close', () => {
      setStatus('closed', 'disconnected — retrying');
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 10000);
    });
    socket.addEventListener('message', (event) => {
      const frame = JSON.parse(event.data);
      switch (frame.type) {
        case 'history':
          list.replaceChildren();
          cards.clear();
          for (const item of frame.items) item.kind === 'card' ? renderCard(item.card) : addMessage(item.message);
          break;
        case 'message':
          addMessage(frame.message);
          break;
        case 'card':
          renderCard(frame.card);
          break;
        case 'typing':
          typingEl.hidden = !frame.on;
          break;
      }
    });
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (text === '') return;
    send({ type: 'message', text });
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
