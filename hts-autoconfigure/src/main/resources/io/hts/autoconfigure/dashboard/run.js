'use strict';
/* A run's detail: summary and actions, the DAG coloured by state, the Gantt timeline with the critical path, the slowest tasks and every task. */
(function () {
  const { el, svg, table, count, badge, ms, time } = HTS;
  const COLORS = { CREATED: '#a7b0ba', READY: '#7f9cc4', RUNNING: '#2d7ff9', RETRYING: '#f0a020', SUCCEEDED: '#2e9e5b', FAILED: '#d0343a', CANCELLED: '#8a8f96' };
  const MAX_DAG = 2000; // tasks drawn at most; larger graphs: the DOT download
  const PERFETTO = 'https://ui.perfetto.dev';

  HTS.page({
    nav: 'runs',
    path: /^\/runs\/(-?\d+)$/,
    render(main, match) {
      const runId = Number(match[1]);
      const head = el('div');
      const dag = el('div', { class: 'dag', id: 'dag' });
      const timeline = el('div', { class: 'timeline', id: 'timeline' });
      const caption = el('p', { class: 'muted', id: 'timeline-caption' });
      const slowest = el('div');
      const tasks = el('div');
      const stateFilter = el('select', { id: 'filter-task-state' }, ['', ...HTS.STATES].map(s => el('option', { value: s }, s || 'every state')));
      const slowestTitle = el('h2', null, 'Slowest tasks');
      const workerTitle = el('h2', null, 'Where the workers\u2019 time went');
      main.append(head, el('h2', null, 'Graph'), legend('dag-legend'), dag, el('h2', null, 'Timeline'), legend('timeline-legend'), timeline, caption,
        el('div', { class: 'split' }, el('div', null, slowestTitle, slowest),
          el('div', null, workerTitle, el('div', { id: 'worker-time' }))),
        el('h2', null, 'Tasks ', stateFilter), tasks);
      let layout = null;
      let chart = null;
      let finished = false;
      let profile = null;
      const drawTasks = () => profile && tasks.replaceChildren(taskTable(profile, stateFilter.value));
      stateFilter.addEventListener('change', drawTasks);
      return async (live) => {
        if (finished) return;
        let p;
        try {
          p = await HTS.getJson('htsprofiler', '/' + runId + '?limit=10000');
        } catch (e) {
          if (!live()) return;
          head.replaceChildren(el('h1', null, 'Run #' + runId), el('p', { class: 'muted', id: 'run-missing' }, HTS.explain(e)));
          return;
        }
        if (!live()) return;
        profile = p;
        finished = p.status !== 'RUNNING';
        const soFar = finished ? '' : ' so far'; // a snapshot of a run still going: its figures are partial
        slowestTitle.textContent = finished ? 'Slowest tasks' : 'Slowest tasks that ended so far';
        workerTitle.textContent = 'Where the workers\u2019 time went' + soFar;
        head.replaceChildren(...summary(p));
        const list = p.taskList.tasks;
        const critical = new Set(p.criticalPath || []);
        if (list.length > MAX_DAG || p.taskList.total > list.length) {
          dag.replaceChildren(el('p', { class: 'muted' }, count(p.taskList.total, 'task') + ': too many to draw here; download the graph as ',
            el('a', { href: HTS.url('htsprofiler', '/' + runId + '?format=dot'), download: 'run-' + runId + '.dot' }, 'DOT'), '.'));
        } else if (list.length === 0) {
          dag.replaceChildren(el('p', { class: 'muted', id: 'dag-empty' }, 'This graph has no task.'));
        } else {
          if (!layout) layout = layOut(list);
          dag.replaceChildren(drawDag(layout, list, critical));
        }
        chart = drawTimeline(timeline, caption, chart, p, critical);
        slowest.replaceChildren(table(['task', 'where', 'duration'], (p.slowestTasks || []).map(t => el('tr', null,
          el('td', null, taskLink(t.task)), el('td', null, where(t)), el('td', { class: 'num' }, ms(t.millis))))));
        document.getElementById('worker-time').replaceChildren(workerTime(p));
        drawTasks();
      };
    },
  });

  /** What the colours of the graph's boxes and the timeline's bars mean. */
  function legend(id) {
    return el('div', { class: 'legend', id }, HTS.STATES.map(s => el('span', { dataset: { state: s } }, el('i', { style: 'background:' + COLORS[s] }), s)),
      el('span', null, el('i', { style: 'background:#fff;border:2px solid #111' }), 'critical path'));
  }

  function summary(p) {
    const s = p.taskStates || {};
    const done = (s.SUCCEEDED || 0) + (s.FAILED || 0) + (s.CANCELLED || 0);
    const active = p.status === 'RUNNING';
    const actions = [];
    if (HTS.writable() && active) {
      actions.push(HTS.action('Cancel run', { cancelRun: p.runId }, { class: 'danger action-cancel', dataset: { run: p.runId } }));
    }
    if (HTS.writable() && HTS.shared.hts && HTS.shared.hts.graphs && HTS.shared.hts.graphs[p.graph]) {
      actions.push(HTS.action('Run again', { run: p.graph }, { class: 'primary action-run', dataset: { graph: p.graph } },
        answer => { if (answer.submitted) location.hash = '#/runs/' + answer.submitted.runId; }));
    }
    const trace = HTS.url('htsprofiler', '/' + p.runId + '?format=trace');
    return [
      el('h1', null, 'Run #' + p.runId + ' of ', el('a', { href: '#/runs?graph=' + encodeURIComponent(p.graph) }, p.graph), ' ',
        el('span', { id: 'run-status', dataset: { status: p.status } }, badge(p.status))),
      el('div', { class: 'cards' },
        card('submitted', time(p.submitted)), card(active ? 'makespan so far' : 'makespan', ms(p.makespanMillis), 'card-makespan'),
        card('tasks', done + ' / ' + p.tasks + ' done'), card('policy', p.policy),
        // while the run goes on, a running task counts with its time so far
        p.criticalPathMillis != null ? card(active ? 'critical path so far' : 'critical path',
          ms(p.criticalPathMillis) + ' (' + count((p.criticalPath || []).length, 'task') + ')', 'card-critical-path') : null,
        p.totalWorkMillis != null ? card(active ? 'total work so far' : 'total work', ms(p.totalWorkMillis), 'card-total-work') : null),
      el('div', { class: 'filters' }, HTS.progressBar({ status: p.status, tasks: p.tasks, taskStates: s }), actions,
        el('a', { href: trace, download: 'hts-run-' + p.runId + '.trace.json', id: 'trace-download' }, 'Download the trace'),
        el('button', { id: 'open-perfetto', onclick: () => openInPerfetto(p.runId, trace) }, 'Open in Perfetto'),
        el('a', { href: HTS.url('htsprofiler', '/' + p.runId + '?format=dot'), download: 'hts-run-' + p.runId + '.dot' }, 'Graph as DOT')),
    ];
  }

  function card(label, value, id) {
    return el('div', { class: 'card', id }, el('div', { class: 'label' }, label), el('div', { class: 'value' }, value));
  }

  function taskLink(name) {
    return el('a', { href: '#', onclick: (e) => { e.preventDefault(); focusTask(name); } }, name);
  }

  function focusTask(name) {
    document.querySelectorAll('tr.highlight').forEach(r => r.classList.remove('highlight'));
    const row = [...document.querySelectorAll('#tasks tr.task')].find(r => r.dataset.task === name);
    if (row) {
      row.classList.add('highlight');
      row.scrollIntoView({ block: 'center' });
    }
  }

  /**
   * Opens Perfetto's UI and hands it the trace, as Perfetto documents for opening a trace from
   * another page: PING until it answers PONG, then post {perfetto: {buffer, title}}. Perfetto
   * cannot fetch from this server itself.
   */
  function openInPerfetto(runId, traceUrl) {
    const win = window.open(PERFETTO);
    if (!win) {
      HTS.notice('the browser blocked the Perfetto window: download the trace and open it at ' + PERFETTO, 'error');
      return;
    }
    fetch(traceUrl, { credentials: 'same-origin' }).then(r => r.arrayBuffer()).then(buffer => {
      let tries = 0;
      const timer = setInterval(() => {
        if (++tries > 100) { clearInterval(timer); return; }
        win.postMessage('PING', PERFETTO);
      }, 100);
      const onMessage = (event) => {
        if (event.source !== win || event.data !== 'PONG') return;
        clearInterval(timer);
        window.removeEventListener('message', onMessage);
        win.postMessage({ perfetto: { buffer, title: 'HTS run ' + runId, url: location.href } }, PERFETTO);
      };
      window.addEventListener('message', onMessage);
    }).catch(e => HTS.notice('reading the trace: ' + e.message, 'error'));
  }

  // ---------------------------------------------------------------- the DAG

  /**
   * A layered layout: a task's column is its depth, the longest path from a root; within a column,
   * tasks are ordered by the mean row of their dependencies (two sweeps), which keeps most edges short.
   */
  function layOut(tasks) {
    const index = new Map(tasks.map((t, i) => [t.task, i]));
    const preds = tasks.map(t => (t.after || []).map(n => index.get(n)).filter(i => i != null));
    const succs = tasks.map(() => []);
    preds.forEach((ps, i) => ps.forEach(p => succs[p].push(i)));
    const depth = new Array(tasks.length).fill(0);
    const indegree = preds.map(ps => ps.length);
    const queue = indegree.map((d, i) => (d === 0 ? i : -1)).filter(i => i >= 0);
    for (let k = 0; k < queue.length; k++) {
      const i = queue[k];
      for (const s of succs[i]) {
        depth[s] = Math.max(depth[s], depth[i] + 1);
        if (--indegree[s] === 0) queue.push(s);
      }
    }
    const columns = [];
    depth.forEach((d, i) => (columns[d] = columns[d] || []).push(i));
    const row = new Array(tasks.length).fill(0);
    columns.forEach(c => c.forEach((i, r) => (row[i] = r)));
    for (let sweep = 0; sweep < 2; sweep++) {
      columns.forEach((c, d) => {
        if (d === 0) return;
        const mean = i => (preds[i].length ? preds[i].reduce((s, p) => s + row[p], 0) / preds[i].length : row[i]);
        c.sort((a, b) => mean(a) - mean(b)).forEach((i, r) => (row[i] = r));
      });
    }
    // a wide column (a group of many shards) shrinks the boxes so that the graph stays about 500 px high
    const tallest = Math.max(...columns.map(c => c.length));
    const pitch = Math.max(4, Math.min(34, Math.floor(480 / tallest)));
    const small = pitch < 28 || tasks.length > 300;
    const h = small ? Math.max(3, pitch - 2) : 24;
    const w = small ? (tasks.length > 300 ? 14 : 48) : 132;
    const gapX = small ? 30 : 46;
    const x = i => 10 + depth[i] * (w + gapX);
    const y = i => 10 + (row[i] + (tallest - columns[depth[i]].length) / 2) * pitch;
    return { preds, x, y, w, h, small, width: 20 + columns.length * (w + gapX) - gapX, height: 20 + tallest * pitch - (pitch - h) };
  }

  function drawDag(layout, tasks, critical) {
    const { preds, x, y, w, h } = layout;
    const edges = [];
    preds.forEach((ps, i) => ps.forEach(p => {
      const x1 = x(p) + w, y1 = y(p) + h / 2, x2 = x(i), y2 = y(i) + h / 2, mid = (x1 + x2) / 2;
      const onPath = critical.has(tasks[p].task) && critical.has(tasks[i].task);
      edges.push(svg('path', { class: 'edge' + (onPath ? ' critical' : ''), d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}` }));
    }));
    const nodes = tasks.map((t, i) => svg('g', {
      class: 'node' + (critical.has(t.task) ? ' critical' : ''), dataset: { task: t.task, state: t.state },
      onclick: () => focusTask(t.task),
    }, svg('title', null, t.task + ': ' + t.state + (t.durationMillis != null ? ', ' + ms(t.durationMillis) : '') + (t.cause ? '\n' + t.cause : '')),
    svg('rect', { x: x(i), y: y(i), width: w, height: h, rx: 4, fill: COLORS[t.state] || '#999' }),
    layout.small ? null : svg('text', { x: x(i) + 6, y: y(i) + h / 2 + 4 }, t.task.length > 19 ? t.task.substring(0, 18) + '\u2026' : t.task)));
    return svg('svg', { width: layout.width, height: layout.height, viewBox: `0 0 ${layout.width} ${layout.height}`, dataset: { nodes: tasks.length } },
      svg('g', null, edges), svg('g', null, nodes));
  }

  // ---------------------------------------------------------------- the timeline

  /** Where a task's last attempt ran, for the tables: its device and lane, or another member of the cluster. */
  function where(t) {
    if (t.remote) return (t.device || '') + ' on another member';
    return t.device ? t.device + ' ' + t.lane : '';
  }

  function lane(t) {
    if (t.remote) return 'other members'; // a distributed group's slices sent away: their lanes are those members'
    return t.device + ' ' + (t.device === 'cpu' ? 'worker ' : 'stream ') + t.lane;
  }

  /** A Gantt chart: one row per CPU worker or GPU stream, a bar per task that started, the critical path outlined. */
  function drawTimeline(container, caption, chart, p, critical) {
    const started = p.taskList.tasks.filter(t => t.startMillis != null && t.device != null);
    const lanes = [...new Set(started.map(lane))].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    const end = t => (t.durationMillis != null ? t.startMillis + t.durationMillis : Math.max(t.startMillis, p.makespanMillis));
    const onPath = started.filter(t => critical.has(t.task)).length;
    const soFar = p.status === 'RUNNING' ? ' so far' : '';
    caption.textContent = count(started.length, 'task') + ' on ' + count(lanes.length, 'lane') + soFar
      + (critical.size ? '; critical path' + soFar + ': ' + count(critical.size, 'task') + ', ' + ms(p.criticalPathMillis) + ' (outlined)' : '')
      + '; drag the slider or scroll to zoom.';
    caption.dataset.bars = started.length;
    caption.dataset.critical = onPath;
    if (typeof echarts === 'undefined') {
      container.textContent = 'the timeline needs ECharts, which this server does not serve';
      return null;
    }
    container.style.height = Math.max(140, 70 + lanes.length * 26) + 'px';
    const instance = chart || echarts.init(container);
    instance.resize();
    instance.setOption({
      animation: false,
      grid: { left: 110, right: 20, top: 10, bottom: 50 },
      // ECharts shows a formatter's string as HTML: the task's name is escaped
      tooltip: { formatter: (item) => echarts.format.encodeHTML(item.data.name) + '<br>' + echarts.format.encodeHTML(item.data.state) + ', ' + ms(item.data.value[3]) + ' from ' + ms(item.data.value[1]) },
      xAxis: { type: 'value', min: 0, max: Math.max(p.makespanMillis, 0.001), axisLabel: { formatter: v => ms(v) } },
      yAxis: { type: 'category', data: lanes, inverse: true },
      dataZoom: [{ type: 'slider', filterMode: 'weakFilter', height: 18, bottom: 8 }, { type: 'inside', filterMode: 'weakFilter' }],
      series: [{
        type: 'custom',
        encode: { x: [1, 2], y: 0 },
        renderItem: (params, api) => {
          const row = api.value(0);
          const from = api.coord([api.value(1), row]);
          const to = api.coord([api.value(2), row]);
          const height = api.size([0, 1])[1] * 0.62;
          const shape = echarts.graphic.clipRectByRect(
            { x: from[0], y: from[1] - height / 2, width: Math.max(1, to[0] - from[0]), height },
            { x: params.coordSys.x, y: params.coordSys.y, width: params.coordSys.width, height: params.coordSys.height });
          return shape && { type: 'rect', shape, style: api.style() };
        },
        data: started.map(t => ({
          name: t.task, state: t.state,
          value: [lanes.indexOf(lane(t)), t.startMillis, end(t), end(t) - t.startMillis],
          itemStyle: critical.has(t.task) ? { color: COLORS[t.state], borderColor: '#111', borderWidth: 2 } : { color: COLORS[t.state] },
        })),
      }],
    }, true);
    return instance;
  }

  function workerTime(p) {
    const w = p.workerTime;
    if (!w) return el('p', { class: 'muted' }, 'No timings (profiling off, or the run has not started).');
    const share = v => (w.capacityMillis > 0 ? (100 * v / w.capacityMillis).toFixed(1) + ' %' : '');
    const going = p.status === 'RUNNING';
    return el('div', null, table(['part', 'time', 'share'], [
      ['work (the tasks)', w.workMillis], ['scheduler delay (ready tasks waited)', w.schedulerDelayMillis],
      ['shape idle (nothing ready)', w.shapeIdleMillis], ['capacity (workers x makespan' + (going ? ' so far' : '') + ')', w.capacityMillis],
    ].map(([label, v]) => el('tr', null, el('td', null, label), el('td', { class: 'num' }, ms(v)), el('td', { class: 'num' }, share(v))))),
    going ? el('p', { class: 'muted', id: 'worker-time-so-far' }, 'So far: the run is still going; a task running now counts as work up to now.') : null);
  }

  // ---------------------------------------------------------------- the task table

  function taskTable(p, state) {
    const rows = [];
    for (const t of p.taskList.tasks) {
      if (state && t.state !== state) continue;
      rows.push(el('tr', { class: 'task', dataset: { task: t.task, state: t.state } },
        el('td', null, t.task), el('td', null, badge(t.state)), el('td', { class: 'num' }, t.attempts),
        el('td', null, where(t)), el('td', { class: 'num' }, t.startMillis == null ? '' : ms(t.startMillis)),
        el('td', { class: 'num' }, duration(p, t)),
        el('td', { class: 'muted' }, (t.after || []).join(', ')),
        el('td', null, t.cause ? el('div', { class: 'cause ' + t.state }, t.cause) : null,
          t.stackTrace ? el('details', { open: t.state === 'FAILED' }, el('summary', null, 'stack trace'), el('pre', { class: 'stack' }, t.stackTrace)) : null)));
    }
    const more = p.taskList.total > p.taskList.tasks.length
      ? el('p', { class: 'muted' }, 'The first ' + p.taskList.tasks.length + ' of ' + p.taskList.total + ' tasks.') : null;
    return el('div', null, table(['task', 'state', el('th', { class: 'num' }, 'attempts'), 'where', el('th', { class: 'num' }, 'start'),
      el('th', { class: 'num' }, 'duration'), 'after', 'error'], rows, { id: 'tasks' }), more);
  }

  /** A task's duration; a task running when the profile was taken, its time so far then. */
  function duration(p, t) {
    if (t.durationMillis != null) return ms(t.durationMillis);
    return t.state === 'RUNNING' && t.startMillis != null ? ms(Math.max(0, p.makespanMillis - t.startMillis)) + ' so far' : '';
  }
})();
