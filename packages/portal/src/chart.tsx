/**
 * A horizontal bar chart drawn as inline SVG (no chart library, nothing fetched). The SVG is one
 * image with a text alternative; the same numbers are in a table next to it for everyone.
 */

export interface Bar {
  readonly label: string;
  readonly value: number;
  /** A CSS class setting the bar's fill (e.g. `bar-good`). */
  readonly tone: string;
}

const ROW = 28;
const LABEL_WIDTH = 110;
const VALUE_WIDTH = 48;
const WIDTH = 480;

export function BarChart({ bars, label }: { bars: readonly Bar[]; label: string }) {
  const max = Math.max(1, ...bars.map((bar) => bar.value));
  const room = WIDTH - LABEL_WIDTH - VALUE_WIDTH;
  const height = bars.length * ROW;
  const description = bars.map((bar) => `${bar.label} ${bar.value}`).join(', ');
  return (
    <svg
      className="bar-chart"
      viewBox={`0 0 ${WIDTH} ${height}`}
      width="100%"
      role="img"
      aria-label={`${label}: ${description}`}
      preserveAspectRatio="xMinYMin meet"
    >
      {bars.map((bar, i) => {
        const y = i * ROW;
        const width = bar.value === 0 ? 0 : Math.max(2, Math.round((bar.value / max) * room));
        return (
          <g key={bar.label} aria-hidden="true">
            <text x={LABEL_WIDTH - 8} y={y + ROW / 2} textAnchor="end" dominantBaseline="central" className="bar-label">
              {bar.label}
            </text>
            <rect x={LABEL_WIDTH} y={y + 5} width={width} height={ROW - 10} rx={3} className={bar.tone} />
            <text x={LABEL_WIDTH + width + 6} y={y + ROW / 2} dominantBaseline="central" className="bar-value">
              {bar.value}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
