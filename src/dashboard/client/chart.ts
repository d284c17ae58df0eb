import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from './dom.js';
import { fmtNumber } from './format.js';

export interface SeriesPoint {
  date: string;
  pageviews: number;
  visitors: number;
}

const cssVar = (name: string, fallback: string) => getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;

/**
 * The pageviews/visitors chart (uPlot). With `previous` (the compared period, bucket i beside
 * bucket i) both lines gain a dashed twin drawn on the same buckets. The canvas is hidden from
 * assistive technology; the figure's caption states the totals, and the same numbers are in the
 * headline.
 */
export function timeseriesChart(points: SeriesPoint[], granularity: 'hour' | 'day' | 'month', previous?: SeriesPoint[]): HTMLElement {
  const holder = h('div', { class: 'chart', 'aria-hidden': 'true' });
  const total = (pts: SeriesPoint[], k: 'pageviews' | 'visitors') => pts.reduce((s, p) => s + p[k], 0);
  const unit = { hour: 'hours', day: 'days', month: 'months' }[granularity];
  const caption = `Chart of ${fmtNumber(total(points, 'pageviews'))} pageviews over ${points.length} ${unit}` + (previous ? `, against ${fmtNumber(total(previous, 'pageviews'))} in the compared period.` : '.');
  const figure = h('figure', { class: 'chart-figure' }, holder, h('figcaption', { class: 'sr-only' }, caption));
  const at = (pts: SeriesPoint[] | undefined, k: 'pageviews' | 'visitors') => points.map((_, i) => pts?.[i]?.[k] ?? null);
  const data: uPlot.AlignedData = [points.map((p) => Date.parse(p.date) / 1000), at(points, 'pageviews'), at(points, 'visitors'), ...(previous ? [at(previous, 'pageviews'), at(previous, 'visitors')] : [])];
  const accent = cssVar('--accent', '#2557d6');
  const second = cssVar('--chart-2', '#b45309');
  const dots = { show: points.length < 40 };
  const format: Intl.DateTimeFormatOptions =
    granularity === 'hour' ? { hour: '2-digit', minute: '2-digit', day: 'numeric', month: 'short' } : granularity === 'month' ? { month: 'short', year: 'numeric' } : { day: 'numeric', month: 'short', year: 'numeric' };
  let plot: uPlot | null = null;
  const draw = () => {
    const width = Math.max(260, holder.clientWidth);
    if (plot) {
      plot.setSize({ width, height: 240 });
      return;
    }
    plot = new uPlot(
      {
        width,
        height: 240,
        // Counts are whole numbers: a y range from 0 keeps small sites from showing fractional ticks.
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(2, max)] } },
        axes: [{ stroke: '#374151', grid: { stroke: '#e5e7eb' } }, { stroke: '#374151', grid: { stroke: '#e5e7eb' }, values: (_u, vals) => vals.map((v) => (Number.isInteger(v) ? fmtNumber(v) : '')) }],
        series: [
          { value: (_u, v) => (v === null ? '' : new Date(v * 1000).toLocaleString('en-GB', format)) },
          { label: 'Pageviews', stroke: accent, width: 2, fill: `${accent}22`, points: dots },
          { label: 'Visitors', stroke: second, width: 2, points: dots },
          ...(previous
            ? [
                { label: 'Pageviews (compared)', stroke: accent, width: 1.5, dash: [6, 4], points: { show: false } },
                { label: 'Visitors (compared)', stroke: second, width: 1.5, dash: [6, 4], points: { show: false } },
              ]
            : []),
        ],
      },
      data,
      holder,
    );
  };
  // Draw once attached (width known), and follow the container's width.
  requestAnimationFrame(draw);
  new ResizeObserver(() => plot && draw()).observe(holder);
  return figure;
}

/** A 7-day sparkline as inline SVG (no chart library for a 20-pixel line). */
export function sparkline(values: number[], label: string): SVGSVGElement {
  const w = 120;
  const hgt = 32;
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? w / (values.length - 1) : w;
  const pts = values.map((v, i) => `${(i * step).toFixed(1)},${(hgt - 2 - (v / max) * (hgt - 4)).toFixed(1)}`).join(' ');
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${w} ${hgt}`);
  svg.setAttribute('width', String(w));
  svg.setAttribute('height', String(hgt));
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  svg.classList.add('sparkline');
  const line = document.createElementNS(ns, 'polyline');
  line.setAttribute('points', pts);
  line.setAttribute('fill', 'none');
  line.setAttribute('stroke', 'currentColor');
  line.setAttribute('stroke-width', '2');
  svg.appendChild(line);
  return svg;
}
