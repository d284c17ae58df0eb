import { api, projectPath } from '../api.js';
import { sparkline } from '../chart.js';
import { field, h, replace, statusLine, submitWith } from '../dom.js';
import { fmtNumber } from '../format.js';
import { empty } from '../widgets.js';

interface ProjectItem { id: string; name: string; domain: string; accessRole: string; icon: string | null }

function projectCard(p: ProjectItem): HTMLElement {
  const spark = h('div', { class: 'spark' }, h('span', { class: 'loading' }, 'Loading…'));
  api<{ data: { pageviews: number; visitors: number }[] }>('GET', projectPath(p.domain, '/timeseries?period=7d')).then(
    ({ data }) => {
      const views = data.map((d) => d.pageviews);
      const total = views.reduce((a, b) => a + b, 0);
      replace(spark, sparkline(views, `Pageviews over the last 7 days: ${views.join(', ')}`), h('span', { class: 'spark-total' }, `${fmtNumber(total)} pageviews in 7 days`));
    },
    () => replace(spark, h('span', { class: 'muted' }, 'Trend unavailable')),
  );
  return h(
    'li',
    { class: 'project-card' },
    h('a', { href: `#/p/${encodeURIComponent(p.domain)}` }, h('strong', null, p.name), h('span', { class: 'muted' }, p.domain)),
    h('span', { class: 'role' }, p.accessRole),
    spark,
  );
}

/** The project list with a 7-day sparkline each, and the way to add one. */
export async function projectsPage(root: HTMLElement): Promise<void> {
  replace(root, h('h1', { tabindex: '-1' }, 'Projects'), h('p', { class: 'loading' }, 'Loading projects…'));
  const { projects } = await api<{ projects: ProjectItem[] }>('GET', '/api/v1/projects');
  replace(
    root,
    h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, 'Projects'), h('a', { class: 'button', href: '#/new' }, 'Add a project')),
    projects.length === 0 ? empty('No projects yet. Add your first site to start counting.') : h('ul', { class: 'projects' }, projects.map(projectCard)),
  );
}

/** Create a project: domain, name and time zone (the browser's zone preselected). */
export function newProjectPage(root: HTMLElement): void {
  const domain = h('input', { type: 'text', name: 'domain', required: true, placeholder: 'example.com', autocomplete: 'off', spellcheck: 'false' });
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: '80' });
  const status = statusLine();
  const form = h(
    'form',
    {
      class: 'panel narrow',
      onsubmit: submitWith(status, async () => {
        const created = await api<{ domain: string }>('POST', '/api/v1/projects', { domain: domain.value, name: name.value, timeZone: zone.value });
        location.hash = `#/p/${encodeURIComponent(created.domain)}/install`;
      }),
    },
    h('h1', { tabindex: '-1' }, 'Add a project'),
    field('Domain', domain, 'The site’s domain, without https:// (subdomains are counted too).'),
    field('Name', name),
    field('Time zone', zonePicker(Intl.DateTimeFormat().resolvedOptions().timeZone), 'Days in reports start at midnight in this zone.'),
    h('button', { type: 'submit' }, 'Create project'),
    status.el,
  );
  const zone = form.querySelector('select') as HTMLSelectElement;
  replace(root, form);
}

/** A select of every IANA zone the browser knows, `selected` preselected. */
export function zonePicker(selected: string): HTMLSelectElement {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : ['UTC'];
  const list = zones.includes(selected) ? zones : [selected, ...zones];
  if (!list.includes('UTC')) list.unshift('UTC');
  return h('select', { name: 'timeZone' }, list.map((z) => h('option', { value: z, selected: z === selected }, z)));
}
