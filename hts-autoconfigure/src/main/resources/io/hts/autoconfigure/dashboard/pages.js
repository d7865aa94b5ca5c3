'use strict';
/* The overview, runs, statistics and events pages (the run detail is in run.js). */
(function () {
  const { el, table, count, badge, ms, bytes, time, shared } = HTS;

  /**
   * A small line chart of the samples in its box, updated in place; null without ECharts. While
   * every point is 0 (nothing ran), {@code idle} says over the flat line what will appear there.
   */
  function lineChart(box, series, unit, idle) {
    if (typeof echarts === 'undefined') {
      box.append(el('p', { class: 'muted' }, 'charts need ECharts, which this server does not serve'));
      return null;
    }
    const plot = el('div', { class: 'plot' });
    const hint = el('p', { class: 'chart-idle muted' }, idle || '');
    box.append(plot, hint);
    const chart = echarts.init(plot);
    const update = () => {
      hint.hidden = !idle || series.some(s => s.points().some(p => p[1] > 0));
      chart.resize(); // the grid may have laid the box out anew
      chart.setOption({
        animation: false,
        grid: { left: 48, right: 12, top: 28, bottom: 24 },
        legend: { top: 2, textStyle: { fontSize: 11 } },
        tooltip: { trigger: 'axis' },
        xAxis: Object.assign({ type: 'time', splitNumber: 4, axisLabel: { fontSize: 10, hideOverlap: true } }, sampled()),
        yAxis: { type: 'value', minInterval: 1, axisLabel: { fontSize: 10, formatter: unit || '{value}' } },
        series: series.map(s => ({
          name: s.name, type: 'line', showSymbol: false, areaStyle: s.area ? { opacity: 0.15 } : undefined,
          data: s.points(),
        })),
      });
    };
    update();
    return { update, chart };
  }

  /** The time the samples span, a minute at least (a few samples would spread the axis over days or milliseconds). */
  function sampled() {
    const t = shared.samples;
    const max = t.length > 0 ? t[t.length - 1].time : Date.now();
    return { min: Math.min(t.length > 0 ? t[0].time : max, max - 60000), max };
  }

  function rates(samples) {
    const out = [];
    for (let i = 1; i < samples.length; i++) {
      const dt = (samples[i].time - samples[i - 1].time) / 1000;
      if (dt > 0) out.push([samples[i].time, Math.max(0, (samples[i].executed - samples[i - 1].executed) / dt)]);
    }
    return out;
  }

  // ---------------------------------------------------------------- overview

  HTS.page({
    nav: 'overview',
    path: /^\/$/,
    render(main) {
      const cards = el('div', { class: 'cards', id: 'counters' });
      const charts = el('div', { class: 'charts' });
      const devices = el('div');
      const cluster = el('div', { id: 'cluster-section' });
      const graphs = el('div');
      const policy = el('div', { class: 'filters', id: 'policy' });
      main.append(el('h1', null, 'Overview'), policy, cards, el('h2', null, 'Over the last minutes'), charts,
        el('h2', null, 'Devices'), devices, cluster, el('h2', null, 'Registered graphs'), graphs);
      const s = () => shared.samples;
      const chartBox = id => { const c = el('div', { class: 'chart', id }); charts.append(c); return c; };
      const boxes = [chartBox('chart-busy'), chartBox('chart-executed'), chartBox('chart-runs')]; // laid out before the charts measure them
      const made = [
        lineChart(boxes[0], [
          { name: 'busy (running tasks)', points: () => s().map(x => [x.time, x.busy]), area: true },
          { name: 'queued', points: () => s().map(x => [x.time, x.queued]) },
        ], null, 'Idle over this period: running and queued tasks will show here while runs go on.'),
        lineChart(boxes[1], [{ name: 'tasks executed / s', points: () => rates(s()), area: true }], null,
          'No task finished over this period: the tasks executed per second will show here.'),
        lineChart(boxes[2], [{ name: 'active runs', points: () => s().map(x => [x.time, x.activeRuns]) }], null,
          'No run in progress over this period: the runs in progress will show here.'),
      ];
      let gpuChart = null;
      let policyShown = null;
      return async () => {
        const hts = shared.hts;
        if (!hts) return;
        const pool = hts.pool || {};
        const card = (label, value, id) => el('div', { class: 'card', id }, el('div', { class: 'label' }, label), el('div', { class: 'value' }, value));
        cards.replaceChildren(
          card('policy', hts.policy, 'card-policy'), card('failure mode', hts.failureMode || ''),
          card('CPU workers', pool.workers), card('queued', pool.queued), card('executed', pool.executed),
          card('steals', pool.steals), card('active runs', (hts.activeRuns || []).length, 'card-active'));
        const key = hts.policy + '|' + HTS.writable();
        if (policyShown !== key) {
          policyShown = key;
          policy.replaceChildren();
          if (HTS.writable()) {
            const select = el('select', { id: 'policy-select' }, (hts.policies || []).map(p => el('option', { value: p, selected: p === hts.policy }, p)));
            policy.append(el('label', null, 'Scheduling policy '), select,
              el('button', { class: 'primary action-policy', onclick: () => switchPolicy(select.value) }, 'Switch'));
          }
        }
        made.forEach(c => c && c.update());
        const gpuIds = Object.keys((shared.samples[shared.samples.length - 1] || {}).gpus || {});
        if (gpuIds.length > 0 && !gpuChart) {
          gpuChart = lineChart(chartBox('chart-gpu-memory'), gpuIds.map(id => ({
            name: id + ' free memory', points: () => s().filter(x => x.gpus[id] != null).map(x => [x.time, x.gpus[id] / 1048576]),
          })), '{value} MiB');
        } else if (gpuChart) {
          gpuChart.update();
        }
        const rows = (hts.devices || []).map(d => deviceRow(d.device, d, 'capacity'))
          .concat((hts.gpus || []).map((g, i) => deviceRow('gpu ' + i, g, 'streams')));
        devices.replaceChildren(table(['device', 'health', 'slots', 'running', 'queued', 'free memory', 'detail'], rows, { id: 'devices' }));
        cluster.replaceChildren(...clusterSection(hts.cluster));
        graphs.replaceChildren(table(['graph', 'tasks', ''], Object.entries(hts.graphs || {}).map(([name, g]) => el('tr', null,
          el('td', null, el('a', { href: '#/runs?graph=' + encodeURIComponent(name) }, name)),
          el('td', { class: 'num' }, g.tasks),
          el('td', null, HTS.writable() ? HTS.action('Run', { run: name }, { class: 'primary action-run', dataset: { graph: name } }) : null)))));
      };
    },
  });

  /** The members of the scheduler's cluster (with a cluster engine only), as they last published themselves. */
  function clusterSection(c) {
    if (!c) return [];
    const rows = (c.members || []).map(m => el('tr', { dataset: { member: m.id } },
      el('td', null, m.address, m.local ? el('span', { class: 'muted' }, ' (this member)') : null),
      el('td', null, badge(m.health)), el('td', { class: 'num' }, m.cpuSlots), el('td', { class: 'num' }, m.gpus),
      el('td', { class: 'num' }, m.gpus > 0 ? bytes(m.freeDeviceMemoryBytes) : ''),
      el('td', { class: 'num' }, (m.load || 0).toFixed(2)), el('td', { class: 'muted' }, m.id)));
    return [el('h2', null, 'Cluster'), el('p', { class: 'muted', id: 'cluster-engine' }, c.engine || ''),
      c.error ? el('p', { class: 'error', id: 'cluster-error' }, c.error) : null,
      table(['member', 'health', 'CPU slots', 'GPUs', 'free GPU memory', 'load', 'id'], rows, { id: 'cluster' })]
      .filter(x => x);
  }

  function deviceRow(name, d, slotsKey) {
    return el('tr', null, el('td', null, name), el('td', null, badge(d.health)), el('td', { class: 'num' }, d[slotsKey]),
      el('td', { class: 'num' }, d.running), el('td', { class: 'num' }, d.queued),
      el('td', { class: 'num' }, d.freeMemoryBytes == null ? '' : bytes(d.freeMemoryBytes)), el('td', { class: 'muted' }, d.detail || ''));
  }

  async function switchPolicy(policy) {
    try {
      const answer = await HTS.post({ policy });
      HTS.notice('policy switched to ' + answer.policy, 'ok');
    } catch (e) {
      HTS.refused('Switching the policy', e);
    }
  }

  // ---------------------------------------------------------------- runs

  /** A run's progress: done tasks of all, from the states when the server counted them. */
  function progress(run) {
    if (run.taskStates) {
      const s = run.taskStates;
      return { done: s.SUCCEEDED + s.FAILED + s.CANCELLED, running: s.RUNNING + s.RETRYING, tasks: run.tasks };
    }
    if (run.pendingTasks != null) return { done: run.tasks - run.pendingTasks, running: 0, tasks: run.tasks };
    return { done: run.tasks, running: 0, tasks: run.tasks };
  }

  function progressBar(run) {
    const p = progress(run);
    const share = p.tasks > 0 ? Math.round(100 * p.done / p.tasks) : 100;
    const finished = run.status !== 'RUNNING';
    return el('span', { class: 'progress', title: p.done + ' of ' + count(p.tasks, 'task') + ' done' + (p.running ? ', ' + p.running + ' running' : '') },
      el('span', { class: 'bar ' + (finished ? 'done ' + run.status : ''), dataset: { done: p.done, tasks: p.tasks } },
        el('span', { style: 'width:' + share + '%' })),
      ' ', p.done + ' / ' + p.tasks);
  }
  HTS.progressBar = progressBar;

  HTS.page({
    nav: 'runs',
    path: /^\/runs$/,
    render(main, match, params) {
      const graphSelect = el('select', { id: 'filter-graph' }, el('option', { value: '' }, 'every graph'));
      const stateSelect = el('select', { id: 'filter-state' }, ['', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED']
        .map(s => el('option', { value: s, selected: s === (params.get('state') || '') }, s || 'every state')));
      const search = el('input', { id: 'filter-run', type: 'search', placeholder: 'run id', size: 8 });
      const body = el('div');
      main.append(el('h1', null, 'Runs'),
        el('div', { class: 'filters' }, el('label', null, 'Graph ', graphSelect), el('label', null, 'State ', stateSelect), search),
        body, el('p', { class: 'muted' }, 'Runs in progress come from /actuator/hts; finished ones from the runs the profiler keeps (hts.profiling.retained-runs).'));
      let wanted = params.get('graph') || '';
      let last = [];
      const draw = () => {
        const graph = graphSelect.value;
        const state = stateSelect.value;
        const id = search.value.trim();
        const rows = last.filter(r => (!graph || r.graph === graph) && (!state || r.status === state) && (!id || String(r.runId).includes(id)));
        body.replaceChildren(rows.length === 0 ? el('p', { class: 'muted', id: 'no-runs' }, 'No run matches.') : table(
          ['run', 'graph', 'status', 'progress', 'submitted', el('th', { class: 'num' }, 'makespan'), 'policy', ''],
          rows.map(r => el('tr', { dataset: { run: r.runId, status: r.status }, class: 'run-row' },
            el('td', null, el('a', { href: '#/runs/' + r.runId }, '#' + r.runId)),
            el('td', null, r.graph), el('td', null, badge(r.status)), el('td', null, progressBar(r)),
            el('td', null, time(r.submitted)), el('td', { class: 'num makespan' }, runTime(r)),
            el('td', null, r.policy || ''),
            el('td', null, r.active && HTS.writable() ? HTS.action('Cancel', { cancelRun: r.runId }, { class: 'danger action-cancel', dataset: { run: r.runId } }) : null))),
          { id: 'runs' }));
      };
      // the address follows the filters (without a history entry each), so that back from a run,
      // a reload or a copied link come back to the same list
      const remember = () => {
        const query = new URLSearchParams();
        if (graphSelect.value) query.set('graph', graphSelect.value);
        if (stateSelect.value) query.set('state', stateSelect.value);
        const hash = '#/runs' + (query.toString() ? '?' + query : '');
        if (location.hash !== hash) history.replaceState(history.state, '', hash);
      };
      [graphSelect, stateSelect].forEach(x => x.addEventListener('change', () => { remember(); draw(); }));
      search.addEventListener('input', draw);
      return async (live) => {
        const profiler = await HTS.getJson('htsprofiler');
        if (!live()) return;
        const byId = new Map();
        (profiler.recentRuns || []).forEach(r => byId.set(r.runId, r));
        ((shared.hts && shared.hts.activeRuns) || []).forEach(r => { if (!byId.has(r.runId)) byId.set(r.runId, Object.assign({ active: true }, r)); });
        last = [...byId.values()].sort((a, b) => b.runId - a.runId);
        const graphs = new Set(Object.keys((shared.hts && shared.hts.graphs) || {}));
        last.forEach(r => graphs.add(r.graph));
        const chosen = graphSelect.value || wanted; // what the user chose, else the link's ?graph=
        wanted = '';
        if (chosen) graphs.add(chosen); // a graph with no run kept still filters (to nothing)
        const names = [...graphs].sort();
        const shown = [...graphSelect.options].slice(1).map(o => o.value);
        if (names.length !== shown.length || names.some((g, i) => g !== shown[i])) {
          // rebuilt only when the graphs changed: a poll must not close a select the user has open
          graphSelect.replaceChildren(el('option', { value: '' }, 'every graph'),
            ...names.map(g => el('option', { value: g, selected: g === chosen }, g)));
        } else if (graphSelect.value !== chosen) {
          graphSelect.value = chosen;
        }
        draw();
      };
    },
  });

  /** A finished run's makespan; a run in progress, its time so far (from the server's clock, at the last poll). */
  function runTime(r) {
    if (r.makespanMillis != null) return ms(r.makespanMillis);
    return r.elapsedMillis != null ? ms(r.elapsedMillis) + ' so far' : '';
  }

  // ---------------------------------------------------------------- statistics

  HTS.page({
    nav: 'statistics',
    path: /^\/statistics$/,
    render(main) {
      const body = el('div');
      main.append(el('h1', null, 'Statistics'), el('p', { class: 'muted' },
        'Durations per graph and task (or group) over the runs the profiler keeps: p50, p90 and p99 from HdrHistogram. '
        + 'Every task that ran counts, however it ended; failed and cancelled say how many of them failed or were cancelled while they ran.'), body);
      return async (live) => {
        const profiler = await HTS.getJson('htsprofiler');
        if (!live()) return;
        const sections = [];
        for (const [graph, byTask] of Object.entries(profiler.statistics || {})) {
          const entries = Object.entries(byTask).sort((a, b) => b[1].p99Millis - a[1].p99Millis);
          const max = Math.max(...entries.map(e => e[1].maxMillis), 0.000001);
          sections.push(el('h2', null, graph), table(
            ['task or group', 'count', 'failed', 'cancelled', 'mean', 'p50', 'p90', 'p99', 'max', 'p50 … p99 of the max'],
            entries.map(([name, s]) => el('tr', { dataset: { name } }, el('td', null, name), el('td', { class: 'num count' }, s.count),
              el('td', { class: 'num failed' + (s.failed ? ' nonzero' : '') }, s.failed || 0),
              el('td', { class: 'num cancelled' }, s.cancelled || 0),
              el('td', { class: 'num' }, ms(s.meanMillis)), el('td', { class: 'num' }, ms(s.p50Millis)), el('td', { class: 'num' }, ms(s.p90Millis)),
              el('td', { class: 'num' }, ms(s.p99Millis)), el('td', { class: 'num' }, ms(s.maxMillis)),
              el('td', null, el('span', { class: 'bar' }, el('span', {
                style: 'left:' + Math.min(99, 100 * s.p50Millis / max) + '%;width:' + Math.max(1, 100 * (s.p99Millis - s.p50Millis) / max) + '%',
              }))))), { class: 'statistics', dataset: { graph } }));
        }
        const slowest = profiler.slowestTasks || [];
        sections.push(el('h2', null, 'Slowest tasks'), table(['task', 'graph', 'run', 'duration'],
          slowest.map(t => el('tr', null, el('td', null, t.task), el('td', null, t.graph),
            el('td', null, el('a', { href: '#/runs/' + t.runId }, '#' + t.runId)), el('td', { class: 'num' }, ms(t.millis))))));
        body.replaceChildren(...(sections.length > 2 ? sections : [el('p', { class: 'muted' }, 'No run has finished yet.'), ...sections]));
      };
    },
  });

  // ---------------------------------------------------------------- events

  const GROUPS = {
    '': () => true,
    runs: e => e.type.startsWith('RUN_'),
    problems: e => /FAILED|RETRYING|TIMED_OUT|STALLED|CANCELLED/.test(e.type),
  };

  HTS.page({
    nav: 'events',
    path: /^\/events$/,
    render(main, match, params) {
      const type = el('select', { id: 'filter-type' },
        el('option', { value: '' }, 'every type'), el('option', { value: 'runs' }, 'runs only'),
        el('option', { value: 'problems' }, 'failures, retries, cancels'),
        HTS.EVENT_TYPES.map(t => el('option', { value: t }, t)));
      const run = el('input', { id: 'filter-run', type: 'search', placeholder: 'run id', size: 8, value: params.get('runId') || '' });
      const text = el('input', { id: 'filter-text', type: 'search', placeholder: 'graph, task, detail…', size: 24 });
      const paused = el('input', { type: 'checkbox', id: 'pause' });
      const shownCount = el('span', { class: 'muted' });
      const body = el('div');
      main.append(el('h1', null, 'Live events'),
        el('div', { class: 'filters' }, type, run, text, el('label', null, paused, ' pause'), shownCount), eventLegend(), body,
        el('p', { class: 'muted' }, 'From /actuator/htsevents/stream (routine per-task events are not streamed); after a lost connection the browser resumes with Last-Event-ID and the server replays what its buffer still holds.'));
      let dirty = true;
      const draw = () => {
        dirty = false;
        const runId = run.value.trim();
        const words = text.value.trim().toLowerCase();
        const group = GROUPS[type.value];
        const match = e => (group ? group(e) : e.type === type.value) && (!runId || String(e.runId) === runId)
          && (!words || [e.graph, e.task, e.detail, e.error, e.type].some(v => v && String(v).toLowerCase().includes(words)));
        const shown = shared.events.filter(match).slice(-500).reverse();
        shownCount.textContent = shown.length + ' shown of ' + shared.events.length + ' received';
        body.replaceChildren(table(['time', 'type', 'run', 'task', 'where', 'detail'], shown.map(e => el('tr', { class: 'event', dataset: { type: e.type, run: e.runId } },
          el('td', null, time(e.time)), el('td', null, el('span', { class: 'badge ' + typeState(e.type) }, e.type)),
          el('td', null, el('a', { href: '#/runs/' + e.runId }, e.graph + ' #' + e.runId)),
          el('td', null, e.task || ''), el('td', null, e.device ? e.device + (e.worker != null ? ' ' + e.worker : '') : ''),
          el('td', { class: 'detail' }, e.attempt > 1 ? 'attempt ' + e.attempt + ' ' : '', e.detail || '',
            e.error ? el('span', { class: 'cause ' + typeState(e.type) }, ' ' + e.error) : null))),
        { class: 'events', id: 'events' }));
      };
      [type, run, text].forEach(x => x.addEventListener('input', draw));
      type.addEventListener('change', draw);
      const listener = () => { dirty = true; };
      shared.eventListeners.add(listener);
      const timer = setInterval(() => {
        if (!document.body.contains(body)) { clearInterval(timer); shared.eventListeners.delete(listener); return; }
        if (dirty && !paused.checked) draw();
      }, 300);
      draw();
      return null;
    },
  });

  /** What the badges' colours mean, and the errors': a failure's in red, a cancel's in grey. */
  function eventLegend() {
    const swatch = (state, label) => el('span', null, el('i', { class: 'swatch ' + state }), label);
    return el('div', { class: 'legend', id: 'events-legend' }, swatch('RUNNING', 'submitted, started'), swatch('SUCCEEDED', 'succeeded'),
      swatch('RETRYING', 'retrying, waiting'), swatch('FAILED', 'failed, timed out, stalled (error in red)'),
      swatch('CANCELLED', 'cancelled (cause in grey)'), swatch('READY', 'ready, placed'));
  }

  function typeState(type) {
    if (/SUCCEEDED/.test(type)) return 'SUCCEEDED';
    if (/FAILED|TIMED_OUT|STALLED/.test(type)) return 'FAILED';
    if (/CANCELLED/.test(type)) return 'CANCELLED';
    if (/RETRYING|WAITING/.test(type)) return 'RETRYING';
    if (/STARTED|SUBMITTED/.test(type)) return 'RUNNING';
    return 'READY';
  }
})();
