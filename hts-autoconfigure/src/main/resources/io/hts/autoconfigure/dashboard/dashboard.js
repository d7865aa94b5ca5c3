'use strict';
/*
 * The HTS dashboard's core: where the endpoints are, reading and writing them, the state every page
 * shares (the scheduler's state polled every two seconds, its samples, the live events), the router
 * and DOM helpers. Pages register in pages.js and run.js. No build step, no network beyond this
 * server: ECharts comes from its WebJar, through the dashboard endpoint.
 */
const HTS = (function () {
  const config = JSON.parse(document.getElementById('hts-config').textContent);
  // the endpoints sit beside the dashboard under the management base path: the page's path less
  // its own path mapping (which may have slashes in it), with or without a trailing slash
  const base = (function () {
    const here = location.pathname.replace(/\/+$/, '');
    const mine = '/' + encodeURI(config.htsdashboard.replace(/\/+$/, ''));
    const path = here.endsWith(mine) ? here.substring(0, here.length - mine.length) : here.substring(0, here.lastIndexOf('/'));
    return new URL(path + '/', location.href);
  })();
  const POLL_MS = 2000;
  const MAX_SAMPLES = 180;
  const MAX_EVENTS = 2000;
  const RUN_TYPES = ['RUN_SUBMITTED', 'RUN_SUCCEEDED', 'RUN_FAILED', 'RUN_CANCELLED', 'RUN_STALLED'];
  const EVENT_TYPES = RUN_TYPES.concat(['TASK_READY', 'TASK_PLACED', 'TASK_WAITING', 'TASK_STARTED',
    'TASK_SUCCEEDED', 'TASK_RETRYING', 'TASK_FAILED', 'TASK_CANCELLED', 'TASK_TIMED_OUT', 'TASK_ABANDONED_RETURNED']);
  const STATES = ['CREATED', 'READY', 'RUNNING', 'RETRYING', 'SUCCEEDED', 'FAILED', 'CANCELLED'];

  const shared = {
    hts: null, // the latest GET of the hts endpoint
    samples: [], // {time, busy, queued, executed, activeRuns, gpus: {id: freeBytes}}
    events: [], // the latest events, oldest first
    eventListeners: new Set(),
    stream: { state: 'connecting', reconnects: 0, lastId: null, instance: null, restarts: 0 },
  };
  const pages = [];
  let current = null; // {page, refresh}
  let generation = 0;
  let refreshTimer = null;

  function url(id, rest) {
    return new URL(config[id] + (rest || ''), base).href;
  }

  const STATUS_NAMES = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
    409: 'Conflict', 413: 'Content Too Large', 415: 'Unsupported Media Type', 429: 'Too Many Requests', 500: 'Internal Server Error',
    502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout' };

  class HttpError extends Error {
    constructor(endpoint, status, detail) {
      super(detail || ('HTTP ' + status));
      this.endpoint = endpoint;
      this.status = status;
      this.reason = detail || null;
    }
  }

  /** What an error answer's body says of why: an HTS problem's detail, Spring Boot's message or error, or short plain text. */
  function reasonOf(text, json) {
    if (json && typeof json === 'object') {
      return json.detail || json.message || json.error || null;
    }
    const plain = (text || '').trim();
    return plain && plain.length <= 300 && !plain.startsWith('<') ? plain : null;
  }

  async function getJson(id, rest) {
    const response = await fetch(url(id, rest), { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
    const text = await response.text();
    let body = null;
    try { body = JSON.parse(text); } catch (e) { body = null; }
    if (!response.ok) {
      throw new HttpError(id, response.status, body && body.detail ? body.detail : null);
    }
    return body;
  }

  /** A POST to the hts endpoint; Spring Security's cookie CSRF token is sent back when there is one. */
  async function post(body) {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
    const token = document.cookie.split('; ').find(c => c.startsWith('XSRF-TOKEN='));
    if (token) {
      headers['X-XSRF-TOKEN'] = decodeURIComponent(token.substring('XSRF-TOKEN='.length));
    }
    const response = await fetch(url('hts'), { method: 'POST', headers, credentials: 'same-origin', body: JSON.stringify(body) });
    const text = await response.text();
    let json = null;
    try { json = JSON.parse(text); } catch (e) { json = null; }
    if (!response.ok) {
      throw new HttpError('hts', response.status, reasonOf(text, json));
    }
    return json || {};
  }

  /** Whether the hts endpoint takes writes: the actions are shown only then. */
  function writable() {
    return shared.hts != null && shared.hts.access === 'unrestricted';
  }

  // ---------------------------------------------------------------- DOM helpers

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    setAttributes(e, attrs);
    append(e, children);
    return e;
  }

  function svg(tag, attrs, ...children) {
    const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
    setAttributes(e, attrs);
    append(e, children);
    return e;
  }

  function setAttributes(e, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k === 'class') e.setAttribute('class', v);
      else if (k.startsWith('on')) e.addEventListener(k.substring(2), v);
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
  }

  function append(e, children) {
    for (const c of children.flat(Infinity)) {
      if (c == null || c === false) continue;
      e.append(c instanceof Node ? c : String(c));
    }
  }

  /** A table; a header given as text is right-aligned over a column of numbers (cells of class num). */
  function table(headers, rows, attrs) {
    const body = el('tbody', null, rows);
    const first = body.rows.length > 0 ? body.rows[0].cells : [];
    return el('table', attrs,
      el('thead', null, el('tr', null, headers.map((h, i) => typeof h !== 'string' ? h
        : el('th', { class: first[i] && first[i].classList.contains('num') ? 'num' : null }, h)))),
      body);
  }

  /** "1 task", "2 tasks". */
  function count(n, noun) {
    return n + ' ' + noun + (n === 1 ? '' : 's');
  }

  function badge(state) {
    return el('span', { class: 'badge ' + state }, state);
  }

  function ms(value) {
    if (value == null) return '';
    if (value >= 10000) return (value / 1000).toFixed(1) + ' s';
    if (value >= 100) return value.toFixed(0) + ' ms';
    if (value >= 1) return value.toFixed(1) + ' ms';
    return value.toFixed(3) + ' ms';
  }

  function bytes(value) {
    if (value == null) return '';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = value;
    let u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return (u === 0 ? v : v.toFixed(1)) + ' ' + units[u];
  }

  function time(iso) {
    if (!iso) return '';
    const d = new Date(iso);
    return d.toLocaleTimeString(undefined, { hour12: false }) + '.' + String(d.getMilliseconds()).padStart(3, '0');
  }

  function notice(text, kind) {
    const box = document.getElementById('notice');
    const line = el('div', { class: kind || '' }, text);
    box.append(line);
    setTimeout(() => line.remove(), kind === 'error' ? 12000 : 5000);
  }

  /**
   * An action the server refused, or that could not reach it: the server's status and reason, in a
   * notice that stays until it is closed (the same one is not shown twice).
   */
  function refused(label, error) {
    let text;
    if (error instanceof HttpError) {
      const name = STATUS_NAMES[error.status] || '';
      text = label + ' refused: HTTP ' + error.status + (name ? ' ' + name : '')
        + (error.reason && error.reason !== name ? ': ' + error.reason : '');
    } else {
      text = label + ' failed: ' + error.message; // no answer: the server is down, say
    }
    const box = document.getElementById('notice');
    if ([...box.querySelectorAll('.refused .text')].some(t => t.textContent === text)) return;
    const line = el('div', { class: 'error refused', role: 'alert' }, el('span', { class: 'text' }, text), ' ',
      el('button', { class: 'close', title: 'close', 'aria-label': 'close', onclick: () => line.remove() }, '\u00d7'));
    box.append(line);
  }

  /** A button that POSTs an action and says what came of it. */
  function action(label, body, attrs, done) {
    const button = el('button', Object.assign({}, attrs, {
      onclick: async () => {
        button.disabled = true;
        try {
          const answer = await post(body);
          notice(describeAnswer(answer), 'ok');
          if (done) done(answer);
          refreshSoon();
        } catch (e) {
          const subject = body.run != null ? 'graph ' + body.run : body.cancelRun != null ? 'run ' + body.cancelRun : null;
          refused(label + (subject ? ' (' + subject + ')' : ''), e);
        } finally {
          button.disabled = false;
        }
      },
    }), label);
    return button;
  }

  function describeAnswer(answer) {
    const said = [];
    if (answer.policy) said.push('policy switched to ' + answer.policy);
    if (answer.runId != null) said.push('run ' + answer.runId + (answer.cancelled ? ' cancelled' : ' was not cancelled (it had ended)'));
    if (answer.submitted) said.push('run ' + answer.submitted.runId + ' of ' + answer.submitted.graph + ' started');
    return said.join('; ') || 'done';
  }

  /** What a failed read means to the person looking, with the property that fixes it. */
  function explain(error) {
    if (error instanceof HttpError && error.status === 404 && !error.message.startsWith('run ')) {
      return 'the ' + error.endpoint + ' endpoint is not available: add ' + error.endpoint
        + ' to management.endpoints.web.exposure.include';
    }
    if (error instanceof HttpError && (error.status === 401 || error.status === 403)) {
      return 'the ' + error.endpoint + ' endpoint refused this browser (' + error.status + ')';
    }
    return error.message;
  }

  // ---------------------------------------------------------------- state, samples and events

  async function poll() {
    try {
      const hts = await getJson('hts');
      shared.hts = hts;
      const devices = hts.devices || [];
      const gpus = {};
      (hts.gpus || []).forEach((g, i) => { if (g.freeMemoryBytes != null) gpus['gpu' + i] = g.freeMemoryBytes; });
      shared.samples.push({
        time: Date.now(),
        busy: devices.reduce((s, d) => s + (d.running || 0), 0),
        queued: devices.reduce((s, d) => s + (d.queued || 0), 0),
        executed: hts.pool ? hts.pool.executed : 0,
        activeRuns: (hts.activeRuns || []).length,
        gpus,
      });
      if (shared.samples.length > MAX_SAMPLES) shared.samples.shift();
      const access = document.getElementById('access');
      access.textContent = writable() ? 'actions allowed' : 'read-only';
      access.title = 'management.endpoint.hts.access: ' + (hts.access || 'not reported');
      document.body.classList.toggle('writable', writable());
      clearProblem('hts');
    } catch (e) {
      shared.hts = null;
      showProblem('hts', e);
    }
  }

  /** A failed read's explanation, by what failed: it stays until that read succeeds again. */
  const problems = new Map();
  function showProblem(key, error) {
    const text = explain(error);
    const shown = problems.get(key);
    if (shown && shown.textContent === text) return;
    if (shown) shown.remove();
    const line = el('div', { class: 'error problem', dataset: { problem: key } }, text);
    document.getElementById('notice').append(line);
    problems.set(key, line);
  }

  function clearProblem(key) {
    const shown = problems.get(key);
    if (shown) {
      shown.remove();
      problems.delete(key);
    }
  }

  /** Events of one application after those of the one before (see connect), each in sequence order. */
  function before(a, b) {
    return a.generation - b.generation || a.sequence - b.sequence;
  }

  function addEvent(event) {
    event.generation = shared.stream.restarts;
    const events = shared.events;
    if (events.length > 0 && before(event, events[events.length - 1]) <= 0) {
      if (events.some(e => before(e, event) === 0)) return; // a replay after a reconnect
      events.push(event);
      events.sort(before);
    } else {
      events.push(event);
    }
    if (events.length > MAX_EVENTS) events.splice(0, events.length - MAX_EVENTS);
    shared.eventListeners.forEach(l => l(event));
    if (event.type.startsWith('RUN_')) refreshSoon();
  }

  function setStreamState(state) {
    shared.stream.state = state;
    const status = document.getElementById('stream-status');
    status.textContent = 'events: ' + state;
    status.dataset.state = state.split(' ')[0];
    status.dataset.reconnects = shared.stream.reconnects;
  }

  /**
   * The live stream, opened once the page has loaded. While the connection stands, the browser
   * reconnects with Last-Event-ID by itself; a connection the server refused (an error status: a
   * proxy's 503, a restarting server) the browser gives up, so the page opens a new one after a
   * pause (1 s, doubling to 30 s), resuming with ?lastEventId=. An event id is instance:sequence;
   * a new application behind the same address has another instance and numbers its events from 1
   * again: its events are kept after the former one's (a generation of their own), never taken
   * for replays of theirs.
   */
  let source = null;
  let retryMs = 1000;
  let retryTimer = null;

  function connect(resumeFrom) {
    if (source) source.close();
    clearTimeout(retryTimer);
    const query = resumeFrom ? '?lastEventId=' + encodeURIComponent(resumeFrom) : '';
    const mine = new EventSource(url('htsevents', '/stream' + query), { withCredentials: true });
    source = mine;
    let opened = Boolean(resumeFrom);
    mine.onopen = () => {
      retryMs = 1000;
      if (opened) {
        shared.stream.reconnects++;
        // no event had come yet: the browser resumed without an id (the server's first id line gives it one)
        setStreamState(shared.stream.lastId ? 'resumed after #' + sequencePart(shared.stream.lastId) : 'resumed');
      } else {
        setStreamState('live');
      }
      opened = true;
    };
    mine.onerror = () => {
      if (mine !== source) return;
      if (mine.readyState !== EventSource.CLOSED) {
        setStreamState('reconnecting');
        return;
      }
      // not exposed (the events endpoint answers 404): nothing to retry; else the server or a
      // proxy refused this once: open a new connection after a pause
      getJson('htsevents', '?limit=1').then(() => true, e => !(e instanceof HttpError && e.status === 404)).then(retry => {
        if (mine !== source) return;
        if (!retry) {
          setStreamState('closed');
          return;
        }
        setStreamState('closed (retrying in ' + Math.round(retryMs / 1000) + ' s)');
        retryTimer = setTimeout(() => connect(shared.stream.lastId || '0'), retryMs);
        retryMs = Math.min(retryMs * 2, 30000);
      });
    };
    EVENT_TYPES.forEach(type => mine.addEventListener(type, message => {
      const instance = instancePart(message.lastEventId);
      if (shared.stream.instance && instance && instance !== shared.stream.instance) {
        shared.stream.restarts++; // another application behind the address: its events after the former one's
      }
      if (instance) shared.stream.instance = instance;
      shared.stream.lastId = message.lastEventId;
      addEvent(JSON.parse(message.data));
    }));
    if (!resumeFrom) {
      // what happened before this page opened (merged by sequence with what the stream sends)
      getJson('htsevents', '?limit=200&newest=true').then(answer => {
        clearProblem('htsevents');
        (answer.events || []).forEach(addEvent);
      }).catch(e => showProblem('htsevents', e));
    }
  }

  function instancePart(id) {
    const colon = id ? id.lastIndexOf(':') : -1;
    return colon < 0 ? null : id.substring(0, colon);
  }

  function sequencePart(id) {
    return id.substring(id.lastIndexOf(':') + 1);
  }

  // ---------------------------------------------------------------- pages

  function page(definition) {
    pages.push(definition);
  }

  async function show() {
    const hash = location.hash.replace(/^#/, '') || '/';
    const [path, query] = hash.split('?');
    const params = new URLSearchParams(query || '');
    const found = pages.map(p => ({ p, match: path.match(p.path) })).find(x => x.match);
    const target = found || { p: pages[0], match: ['/'] };
    document.querySelectorAll('nav a').forEach(a => a.classList.toggle('active', a.dataset.nav === target.p.nav));
    const main = document.getElementById('main');
    main.replaceChildren();
    clearProblem('page'); // the last page's
    const mine = ++generation;
    const refresh = target.p.render(main, target.match, params);
    current = { refresh, generation: mine };
    await refreshNow();
  }

  async function refreshNow() {
    const mine = current;
    if (!mine || !mine.refresh) return;
    try {
      await mine.refresh(() => mine.generation === generation);
      if (mine.generation === generation) clearProblem('page');
    } catch (e) {
      if (mine.generation === generation) showProblem('page', e);
    }
  }

  function refreshSoon() {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(async () => { await poll(); await refreshNow(); }, 150);
  }

  async function tick() {
    if (!document.hidden) {
      await poll();
      await refreshNow();
    }
    setTimeout(tick, POLL_MS);
  }

  async function start() {
    window.addEventListener('hashchange', show);
    await poll();
    await show();
    setTimeout(tick, POLL_MS);
    // after load: an open stream must not keep the page loading
    if (document.readyState === 'complete') setTimeout(connect, 0);
    else window.addEventListener('load', () => setTimeout(connect, 0));
  }

  return {
    start, page, url, getJson, post, writable, shared, el, svg, table, count, badge, ms, bytes, time, notice,
    refused, action, explain, showProblem, STATES, EVENT_TYPES, RUN_TYPES,
  };
})();
