import './styles.css';
import { api, projectPath, publicApi, query, session } from './api.js';
import { periodShortcuts } from './controls.js';
import { renderDashboard, type Dashboard, type ReportSource } from './dashboard.js';
import { h, replace } from './dom.js';
import { accountPage } from './pages/account.js';
import { exportsPage, goalsPage, membersPage } from './pages/manage.js';
import { notificationsPage } from './pages/notifications.js';
import { newProjectPage, projectsPage } from './pages/projects.js';
import { installPage, settingsPage, type ProjectDetail } from './pages/settings.js';
import { signInPage } from './pages/signin.js';
import { parseView, viewQuery, type View } from './view.js';

/**
 * Entry of the dashboard. The app at `/` is hash-routed (#/, #/new, #/account, #/p/{domain}/{tab},
 * #/signin), so the server serves one document; share pages (`/share/{domain}`) render the same
 * dashboard read-only from the public API.
 */
const body = document.body;
const base = body.dataset.base ?? location.origin;
const app = document.getElementById('app') as HTMLElement;
let generation = 0;
/** The project dashboard on screen, so a change of its view (URL query) updates it in place. */
let mounted: { domain: string; root: HTMLElement; dashboard: Dashboard } | null = null;

const TABS = [
  ['', 'Dashboard'],
  ['settings', 'Settings'],
  ['install', 'Install'],
  ['members', 'Members'],
  ['goals', 'Goals & funnels'],
  ['exports', 'Exports'],
  ['notifications', 'Notifications'],
] as const;

function header(): HTMLElement {
  const signOut = h('button', {
    type: 'button',
    class: 'link-like',
    onclick: async () => {
      try {
        await api('POST', '/api/auth/logout');
      } catch {
        // Signed out locally either way.
      }
      session.clear();
      location.hash = '#/signin';
    },
  }, 'Sign out');
  return h('header', { class: 'top' }, h('a', { class: 'brand', href: '#/' }, 'Sightline'), h('nav', { 'aria-label': 'Main' }, h('a', { href: '#/' }, 'Projects'), h('a', { href: '#/account' }, 'Account'), signOut));
}

function apiSource(domain: string, timeZone: string): ReportSource {
  return { domain, timeZone, share: false, report: (name, params = {}) => api('GET', `${projectPath(domain, `/${name}`)}${query(params)}`) };
}

/** The hash of a project's dashboard showing `view`. */
const dashboardHash = (domain: string, view: View) => {
  const q = viewQuery(view);
  return `#/p/${encodeURIComponent(domain)}${q ? `?${q}` : ''}`;
};

async function projectPage(root: HTMLElement, domain: string, tab: string, view: View): Promise<void> {
  replace(root, h('p', { class: 'loading' }, 'Loading project…'));
  const p = await api<ProjectDetail>('GET', projectPath(domain));
  const nav = h('nav', { class: 'tabs-nav', 'aria-label': 'Project' }, TABS.map(([t, label]) => h('a', { href: `#/p/${encodeURIComponent(domain)}${t ? `/${t}` : ''}`, 'aria-current': t === tab ? 'page' : undefined }, label)));
  const content = h('div', { class: 'project-content' });
  replace(root, h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, p.name, h('span', { class: 'muted domain' }, p.domain))), nav, content);
  const pages: Record<string, () => HTMLElement[] | void> = {
    '': () => {
      mounted = { domain, root: content, dashboard: renderDashboard(content, apiSource(domain, p.timeZone), view, (next) => (location.hash = dashboardHash(domain, next))) };
    },
    settings: () => settingsPage(p, base),
    install: () => installPage(p, base),
    members: () => membersPage(p),
    goals: () => goalsPage(p),
    exports: () => exportsPage(p),
    notifications: () => notificationsPage(p),
  };
  const built = (pages[tab] ?? pages[''])();
  if (built) replace(content, built);
}

/** The route of the current hash: path segments and query. */
function parseHash(): { parts: string[]; params: URLSearchParams } {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, q = ''] = raw.split('?');
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(q) };
}

async function route(): Promise<void> {
  const mine = ++generation;
  const { parts, params } = parseHash();
  const view = parseView(params);
  // Same dashboard, another view (a filter, period or comparison; Back included): update in place.
  if (mounted && parts[0] === 'p' && parts[1] === mounted.domain && !parts[2] && mounted.root.isConnected) {
    mounted.dashboard.update(view);
    return;
  }
  mounted = null;
  periodShortcuts(null);
  if (parts[0] !== 'signin' && !session.token) {
    location.hash = '#/signin';
    return;
  }
  if (parts[0] === 'signin') {
    replace(app, h('div', { class: 'page' }));
    signInPage(app.firstElementChild as HTMLElement);
    return;
  }
  const main = h('div', { class: 'page' });
  replace(app, header(), main);
  try {
    if (parts.length === 0) await projectsPage(main);
    else if (parts[0] === 'new') newProjectPage(main);
    else if (parts[0] === 'account') await accountPage(main);
    else if (parts[0] === 'p' && parts[1]) await projectPage(main, parts[1], parts[2] ?? '', view);
    else replace(main, h('h1', { tabindex: '-1' }, 'Page not found'), h('p', null, h('a', { href: '#/' }, 'Back to your projects')));
  } catch (err) {
    if (mine !== generation) return;
    const status = (err as { status?: number }).status;
    if (status === 401) return;
    replace(main, h('div', { class: 'error-box', role: 'alert' }, h('h1', { tabindex: '-1' }, status === 404 ? 'Not found' : 'Something went wrong'), h('p', null, (err as Error).message), h('p', null, h('a', { href: '#/' }, 'Back to your projects'))));
  }
  if (mine === generation) (main.querySelector('h1') as HTMLElement | null)?.focus({ preventScroll: true });
}

/** The public stats page: the same dashboard, read-only, in the project's brand color; its view lives in `#?query`. */
async function shareMode(domain: string): Promise<void> {
  const brand = body.dataset.brand;
  if (brand) {
    body.style.setProperty('--accent', brand);
    body.style.setProperty('--accent-contrast', readableOn(brand));
  }
  const base = `/api/share/${encodeURIComponent(domain)}`;
  const main = h('div', { class: 'page' });
  const root = h('div');
  replace(app, h('header', { class: 'top share' }, h('span', { class: 'brand' }, body.dataset.name ?? domain), h('span', { class: 'muted' }, `Public stats of ${domain} · by Sightline`)), main);
  replace(main, h('h1', { class: 'sr-only' }, `${body.dataset.name ?? domain}: public stats`), root);
  let timeZone = 'UTC';
  try {
    timeZone = (await publicApi<{ timeZone: string }>('GET', base)).timeZone;
  } catch {
    // The reports say what is wrong; dates default to UTC.
  }
  const source: ReportSource = { domain, timeZone, share: true, report: (name, params = {}) => publicApi('GET', `${base}/${name}${query(params)}`) };
  const viewOfHash = () => parseView(new URLSearchParams(location.hash.replace(/^#\??/, '')));
  const dashboard = renderDashboard(root, source, viewOfHash(), (next) => (location.hash = `?${viewQuery(next)}`));
  window.addEventListener('hashchange', () => dashboard.update(viewOfHash()));
}

/** Black or white, whichever reads better on `hex` (WCAG relative luminance). */
function readableOn(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179 ? '#000000' : '#ffffff';
}

if (body.dataset.share) void shareMode(body.dataset.share);
else {
  window.addEventListener('hashchange', () => void route());
  void route();
}
