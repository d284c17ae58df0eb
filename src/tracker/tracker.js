/*
 * Sightline browser tracker, served minified at GET /script.js (build: scripts/build-tracker.ts).
 * Plain ES2017, no dependencies, no cookies, no storage unless the site opts in with data-persist.
 *
 * Install:  <script defer src="{base}/script.js" data-site="{projectId}"></script>
 * Options (attributes on the script tag):
 *   data-api="URL"         where events go (default: api/event next to the script, i.e. {base}/api/event)
 *   data-hash              count #fragment changes as page changes (hash-routed SPAs)
 *   data-outbound          custom event "Outbound Link: Click" {url} on links to other hosts
 *   data-downloads[="pdf,zip"]  custom event "File Download" {url}; value overrides the extension list
 *   data-persist           random first-party visitor id in localStorage, sent as visitorId (with consent)
 *   data-allow-localhost   also send from localhost / 127.x (development, tests)
 * Calls before the script has loaded are queued by this stub and replayed:
 *   <script>window.sightline=window.sightline||function(){(sightline.q=sightline.q||[]).push(arguments)}</script>
 *   sightline('track', 'Signup', {plan: 'pro'}); sightline('transaction', 'Order', 1999, 'EUR');
 * After load: sightline.track(name, props?), sightline.transaction(name, amountCents, currency, props?).
 *
 * CLS uses session windows (shifts < 1 s apart, window ≤ 5 s, largest window wins; shifts right after
 * input excluded). INP is approximate: the longest interaction seen (event timing entries ≥ 40 ms plus
 * the first input). `leave` carries the visible time since the previous leave of the same page, so the
 * time on a page is the sum of its leave events' durationMs.
 */
((w, d) => {
  const s = d.currentScript || d.querySelector('script[data-site]');
  const ds = s && s.dataset;
  const site = ds && ds.site;
  // A second copy of the script on the same page would count everything twice.
  if (!site || (w.sightline && w.sightline.track)) return;
  const has = (k) => k in ds;
  const loc = w.location;
  const nav = navigator;
  const api = ds.api || new URL('api/event', s.src).href;
  const hash = has('hash');
  // Development hosts would only pollute a real project's numbers.
  const off =
    loc.protocol == 'file:' ||
    (!has('allowLocalhost') && /^(localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)$|\.localhost$/.test(loc.hostname));
  const now = () => Date.now();
  const visible = () => d.visibilityState == 'visible';
  const perf = w.performance;
  const navEntry = perf && perf.getEntriesByType && perf.getEntriesByType('navigation')[0];
  // A prerendered page starts its clock when it is shown, not when it was fetched.
  const act = (navEntry && navEntry.activationStart) || 0;
  const ms = (t) => Math.max(0, Math.round(t - act));

  let vid;
  if (has('persist')) {
    try {
      vid =
        localStorage.sightline_id ||
        (localStorage.sightline_id = Array.from(crypto.getRandomValues(new Uint32Array(4)), (x) => x.toString(36)).join(''));
    } catch (e) {
      // Storage blocked: carry on without an id.
    }
  }

  let cur; // URL of the current page as last sent
  let first; // URL of the hard navigation, the page the vitals belong to
  let acc = 0; // visible ms of the current page not yet reported
  let since = 0; // start of the current visible stretch, 0 while hidden

  const send = (kind, o, beacon) => {
    if (off) return;
    const body = JSON.stringify(Object.assign({ site, kind, url: cur, visitorId: vid }, o));
    // A string body goes out as text/plain: no CORS preflight, and it survives the page going away.
    if (!(beacon && nav.sendBeacon && nav.sendBeacon(api, body))) {
      fetch(api, { method: 'POST', body, keepalive: true }).catch(() => {});
    }
  };

  const leave = (beacon) => {
    const t = acc + (since && now() - since);
    acc = 0;
    since = visible() ? now() : 0;
    if (t > 0) send('leave', { durationMs: Math.round(t) }, beacon);
  };

  const page = () => {
    const u = hash ? loc.href : loc.href.split('#')[0];
    if (u == cur) return;
    // An SPA navigation behaves like a link click: the previous page is the referrer.
    const referrer = cur || d.referrer || undefined;
    if (cur) leave();
    cur = u;
    first = first || u;
    send('pageview', { referrer, screenWidth: screen.width });
  };

  const vitals = {};
  let vitalsSent;
  const observe = (type, f, o) => {
    try {
      new PerformanceObserver((l) => l.getEntries().forEach(f)).observe(Object.assign({ type, buffered: true }, o));
    } catch (e) {
      // Entry type not supported by this browser.
    }
  };
  observe('paint', (e) => {
    if (e.name == 'first-contentful-paint') vitals.fcp = ms(e.startTime);
  });
  observe('largest-contentful-paint', (e) => {
    vitals.lcp = ms(e.startTime);
  });
  const interaction = (e) => {
    if (e.interactionId) vitals.inp = Math.max(vitals.inp || 0, Math.round(e.duration));
  };
  observe('event', interaction, { durationThreshold: 40 });
  observe('first-input', interaction);
  let win = 0;
  let winStart = 0;
  let lastShift = -1e4;
  observe('layout-shift', (e) => {
    if (e.hadRecentInput) return;
    const t = e.startTime;
    if (t - lastShift < 1000 && t - winStart < 5000) win += e.value;
    else {
      win = e.value;
      winStart = t;
    }
    lastShift = t;
    vitals.cls = Math.max(vitals.cls || 0, Math.round(win * 1e4) / 1e4);
  });

  const hide = () => {
    leave(1);
    if (navEntry) vitals.ttfb = ms(navEntry.responseStart);
    if (vitalsSent || !Object.keys(vitals).length) return;
    vitalsSent = 1;
    send('vitals', { url: first, vitals }, 1);
  };

  const track = (name, props) => send('custom', { name, props });
  const sl = (m, ...a) => typeof sl[m] == 'function' && sl[m](...a);
  sl.track = track;
  sl.transaction = (name, amountCents, currency, props) =>
    send('transaction', { name, amountCents, currency, props });

  const downloads =
    has('downloads') &&
    new RegExp(
      '\\.(' +
        (ds.downloads || 'pdf|docx?|xlsx?|pptx?|odt|ods|csv|txt|rtf|epub|zip|rar|7z|gz|tgz|dmg|pkg|exe|msi|apk|iso|mp3|mp4|mov|avi|wav')
          .split(/[\s,|]+/)
          .join('|') +
        ')$',
      'i',
    );
  const outbound = has('outbound');
  const click = (e) => {
    const a = e.target.closest && e.target.closest('a[href]');
    if (!a || (e.type == 'auxclick' && e.button != 1)) return;
    const url = a.href;
    if (downloads && downloads.test(a.pathname)) track('File Download', { url });
    else if (outbound && /^https?:$/.test(a.protocol) && a.hostname != loc.hostname) track('Outbound Link: Click', { url });
  };

  const start = () => {
    since = visible() ? now() : 0;
    d.addEventListener('visibilitychange', () => (visible() ? (since = since || now()) : hide()));
    w.addEventListener('pagehide', hide);
    const h = w.history;
    ['pushState', 'replaceState'].forEach((m) => {
      const f = h[m];
      h[m] = function (...a) {
        const r = f.apply(this, a);
        page();
        return r;
      };
    });
    w.addEventListener('popstate', page);
    if (hash) w.addEventListener('hashchange', page);
    if (downloads || outbound) {
      d.addEventListener('click', click);
      d.addEventListener('auxclick', click);
    }
    page();
    const q = (w.sightline && w.sightline.q) || [];
    w.sightline = sl;
    for (const a of q) sl(...a);
  };

  // A prerendered page is not a visit until it is shown.
  let started;
  const go = () => {
    if (started || d.prerendering || d.visibilityState == 'prerender') return;
    started = 1;
    start();
  };
  d.addEventListener('visibilitychange', go);
  d.addEventListener('prerenderingchange', go);
  go();
})(window, document);
