import { api, projectPath } from '../api.js';
import { confirmDialog, copyText, field, h, statusLine, submitWith } from '../dom.js';
import { fmtDate } from '../format.js';
import { zonePicker } from './projects.js';

/** What GET /api/v1/projects/{domain} answers. */
export interface ProjectDetail {
  id: string; name: string; domain: string; timeZone: string; publicStatsEnabled: boolean;
  brandColor: string | null; icon: string | null; installationSeenAt: string | null; isOwner: boolean;
}

const shareUrl = (base: string, domain: string) => `${base}/share/${encodeURIComponent(domain)}`;

/** Name, time zone, public stats (with the share link), brand color and icon; owner only. */
export function settingsPage(p: ProjectDetail, base: string): HTMLElement[] {
  if (!p.isOwner) return [h('p', { class: 'panel' }, 'Only the owner of this project can change its settings.')];
  const name = h('input', { type: 'text', value: p.name, required: true, maxlength: '80' });
  const zone = zonePicker(p.timeZone);
  const isPublic = h('input', { type: 'checkbox', checked: p.publicStatsEnabled });
  const link = h('p', { class: 'share-link' });
  const showLink = () => {
    link.replaceChildren();
    if (isPublic.checked) link.append('Public page: ', h('a', { href: shareUrl(base, p.domain), target: '_blank', rel: 'noopener' }, shareUrl(base, p.domain)));
  };
  showLink();
  const hasColor = h('input', { type: 'checkbox', checked: p.brandColor !== null });
  const color = h('input', { type: 'color', value: p.brandColor ?? '#2557d6' });
  const icon = h('input', { type: 'url', value: p.icon ?? '', placeholder: 'https://example.com/icon.png' });
  const status = statusLine();
  const form = h(
    'form',
    {
      class: 'panel',
      onsubmit: submitWith(status, async () => {
        await api('PATCH', projectPath(p.domain), {
          name: name.value,
          timeZone: zone.value,
          publicStatsEnabled: isPublic.checked,
          brandColor: hasColor.checked ? color.value : null,
          icon: icon.value.trim() || null,
        });
        Object.assign(p, { name: name.value, timeZone: zone.value, publicStatsEnabled: isPublic.checked });
        showLink();
        status.ok('Settings saved.');
      }),
    },
    h('h2', null, 'Settings'),
    field('Name', name),
    field('Time zone', zone),
    h('div', { class: 'check' }, isPublic, h('label', { for: (isPublic.id = 'public-stats') }, 'Public stats page (anyone with the link can see the dashboard)')),
    link,
    h('div', { class: 'check' }, hasColor, h('label', { for: (hasColor.id = 'use-brand') }, 'Use a brand color on the public page')),
    field('Brand color', color),
    field('Icon URL', icon, 'An https URL of a square image, or empty.'),
    h('button', { type: 'submit' }, 'Save settings'),
    status.el,
  );
  return [form, excludedIps(p), deleteProject(p)];
}

/** The client addresses whose events are dropped (the owner's office, monitors): one per line. */
function excludedIps(p: ProjectDetail): HTMLElement {
  const list = h('textarea', { rows: '4', spellcheck: 'false', placeholder: '203.0.113.7\n2001:db8::1' });
  const status = statusLine();
  const path = `${projectPath(p.domain)}/excluded-ips`;
  const show = (ips: string[]) => {
    list.value = ips.join('\n');
  };
  api<{ ips: string[] }>('GET', path).then((r) => show(r.ips), (err: Error) => status.error(err.message));
  return h(
    'form',
    {
      class: 'panel',
      onsubmit: submitWith(status, async () => {
        const ips = list.value.split(/[\s,]+/).filter(Boolean);
        show((await api<{ ips: string[] }>('PUT', path, { ips })).ips);
        status.ok(ips.length ? 'Excluded addresses saved.' : 'No address is excluded.');
      }),
    },
    h('h2', null, 'Excluded IP addresses'),
    field('Addresses', list, 'Events from these IPv4 or IPv6 addresses are not recorded. One per line, at most 100.'),
    h('button', { type: 'submit' }, 'Save addresses'),
    status.el,
  );
}

function deleteProject(p: ProjectDetail): HTMLElement {
  const status = statusLine();
  return h(
    'section',
    { class: 'panel danger-zone' },
    h('h2', null, 'Delete project'),
    h('p', null, 'Removes the project and every event recorded for it. This cannot be undone.'),
    h('button', {
      type: 'button',
      class: 'danger',
      onclick: async () => {
        const ok = await confirmDialog({ title: `Delete ${p.domain}?`, message: 'The project and all of its analytics data are removed for good.', confirmLabel: 'Delete project', typed: p.domain });
        if (!ok) return;
        try {
          await api('DELETE', projectPath(p.domain), { confirm: true });
          location.hash = '#/';
        } catch (err) {
          status.error((err as Error).message);
        }
      },
    }, 'Delete project…'),
    status.el,
  );
}

/** The install snippet for this project and a live "verify install" check. */
export function installPage(p: ProjectDetail, base: string): HTMLElement[] {
  const snippet = `<script defer src="${base}/script.js" data-site="${p.id}"></script>`;
  const copy = h('button', { type: 'button', class: 'secondary', onclick: () => copyText(snippet, copy) }, 'Copy snippet');
  const status = statusLine();
  if (p.installationSeenAt) status.ok(`Installed: first event received ${fmtDate(p.installationSeenAt)}.`);
  const verify = h('button', {
    type: 'button',
    onclick: async () => {
      verify.disabled = true;
      status.clear();
      try {
        const r = await api<{ verified: boolean; installationSeenAt: string | null }>('POST', projectPath(p.domain, '/install/verify'));
        if (r.verified) status.ok(r.installationSeenAt ? `Installed: first event received ${fmtDate(r.installationSeenAt)}.` : 'Installed: events are arriving.');
        else status.error('No events received yet. Load a page of your site with the snippet, then check again.');
      } catch (err) {
        status.error((err as Error).message);
      } finally {
        verify.disabled = false;
      }
    },
  }, 'Verify install');
  return [
    h(
      'section',
      { class: 'panel' },
      h('h2', null, 'Install the tracker'),
      h('p', null, `Add this line to the <head> of every page of ${p.domain}. It sets no cookies.`),
      h('div', { class: 'copy-row' }, h('pre', { class: 'snippet', tabindex: '0', 'aria-label': 'Install snippet' }, h('code', null, snippet)), copy),
      h('p', { class: 'muted' }, 'Custom events: sightline.track("Signup"). Revenue: sightline.transaction("Order", 1999, "EUR").'),
      verify,
      status.el,
    ),
  ];
}
