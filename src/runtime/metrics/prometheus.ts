import { readdirSync, readFileSync } from 'node:fs';

/**
 * A small Prometheus registry: counters, gauges and histograms with labels,
 * rendered in the text exposition format, plus the process and Node.js
 * series prom-client's default collector exports. Its constructors and
 * methods are prom-client's (`new Counter({ name, help, labelNames,
 * registers })`, `inc(labels, value)`, `registry.metrics()`), so the
 * manager's metrics read the same; it exists because importing prom-client
 * (and the OpenTelemetry API it pulls in) costs an operator about 20 MiB of
 * RSS and 0.3 s of start-up, a third of its idle footprint. A prom-client
 * metric can still be registered here (`registers: [mgr.getMetrics().registry]`):
 * anything with prom-client's `get()` is rendered too.
 */

type Labels = Record<string, string | number>;

/** What a registry renders: one metric family. */
export interface MetricFamily {
  /** Its lines in the text format, HELP and TYPE included. */
  render(): string | Promise<string>;
  readonly name: string;
}

/** prom-client's metric shape, for metrics a user registers with prom-client itself. */
interface PromClientMetric {
  name: string;
  get(): Promise<{
    name: string;
    help: string;
    type: string;
    values: Array<{ value: number; labels: Labels; metricName?: string }>;
  }>;
}

/** Options shared by the metric constructors (prom-client's names). */
export interface MetricOptions<L extends string> {
  /** The series name. */
  name: string;
  /** Its HELP text. */
  help: string;
  /** The label names every series of it carries. Default: none. */
  labelNames?: readonly L[];
  /** Registries to add it to. Default: none. */
  registers?: Registry[];
}

/** The metrics of one manager, rendered together for `/metrics`. */
export class Registry {
  /** The content type of the text format `metrics()` returns. */
  readonly contentType = 'text/plain; version=0.0.4; charset=utf-8';
  private readonly families = new Map<string, MetricFamily | PromClientMetric>();

  /** Adds a metric (ours, or prom-client's); a second one of the same name is refused, as prom-client does. */
  registerMetric(metric: MetricFamily | PromClientMetric): void {
    if (this.families.has(metric.name) && this.families.get(metric.name) !== metric) {
      throw new Error(`A metric with the name ${metric.name} has already been registered.`);
    }
    this.families.set(metric.name, metric);
  }

  /** The metric registered under `name`, if any. */
  getSingleMetric(name: string): MetricFamily | PromClientMetric | undefined {
    return this.families.get(name);
  }

  /** Every registered metric in the Prometheus text format. */
  async metrics(): Promise<string> {
    const parts: string[] = [];
    for (const family of this.families.values())
      parts.push('render' in family ? await family.render() : await renderPromClient(family));
    return parts.join('\n') + '\n';
  }
}

abstract class Metric<L extends string> implements MetricFamily {
  readonly name: string;
  protected readonly help: string;
  protected readonly labelNames: readonly L[];
  /** Series by their label values, in labelNames order. */
  protected readonly series = new Map<string, { labels: Labels; value: number }>();

  constructor(
    options: MetricOptions<L>,
    private readonly type: string,
  ) {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(options.name)) throw new Error(`Invalid metric name: ${options.name}`);
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames ?? [];
    for (const registry of options.registers ?? []) registry.registerMetric(this);
  }

  protected entry(labels: Partial<Record<L, string | number>> | undefined): { labels: Labels; value: number } {
    const given = (labels ?? {}) as Labels;
    const key = this.labelNames.length ? this.labelNames.map((name) => String(given[name] ?? '')).join('\u0000') : '';
    let entry = this.series.get(key);
    if (!entry) {
      for (const name of Object.keys(given)) {
        if (!this.labelNames.includes(name as L))
          throw new Error(
            `Added label "${name}" is not included in initial labelset: ${JSON.stringify(this.labelNames)}`,
          );
      }
      this.series.set(key, (entry = { labels: { ...given }, value: 0 }));
    }
    return entry;
  }

  /** The current series, in prom-client's `get()` shape. */
  get(): Promise<{ name: string; help: string; type: string; values: Array<{ labels: Labels; value: number }> }> {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      values: [...this.series.values()].map(({ labels, value }) => ({ labels: { ...labels }, value })),
    });
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`];
    // An unlabelled counter or gauge shows 0 before its first change, as prom-client's do.
    if (this.series.size === 0 && this.labelNames.length === 0) this.entry(undefined);
    for (const { labels, value } of this.series.values())
      lines.push(`${this.name}${renderLabels(labels)} ${renderValue(value)}`);
    return lines.join('\n');
  }
}

/** Splits prom-client's overloads: `(labels, value)`, `(value)` or `()`. */
function args<L extends string>(
  a?: Partial<Record<L, string | number>> | number,
  b?: number,
): [Partial<Record<L, string | number>> | undefined, number | undefined] {
  return typeof a === 'number' ? [undefined, a] : [a, b];
}

/** A value that only goes up. */
export class Counter<L extends string = string> extends Metric<L> {
  constructor(options: MetricOptions<L>) {
    super(options, 'counter');
  }

  /** Adds `value` (default 1) to the series of `labels`. */
  inc(labels?: Partial<Record<L, string | number>> | number, value?: number): void {
    const [l, v = 1] = args(labels, value);
    if (!(v >= 0)) throw new Error(`It is not possible to decrease a counter (${this.name}: ${v})`);
    this.entry(l).value += v;
  }
}

/** A value that goes up and down. */
export class Gauge<L extends string = string> extends Metric<L> {
  constructor(options: MetricOptions<L>) {
    super(options, 'gauge');
  }

  /** Sets the series of `labels` to `value`. */
  set(labels: Partial<Record<L, string | number>> | number, value?: number): void {
    const [l, v] = args(labels, value);
    this.entry(l).value = v ?? 0;
  }

  /** Adds `value` (default 1). */
  inc(labels?: Partial<Record<L, string | number>> | number, value?: number): void {
    const [l, v = 1] = args(labels, value);
    this.entry(l).value += v;
  }

  /** Subtracts `value` (default 1). */
  dec(labels?: Partial<Record<L, string | number>> | number, value?: number): void {
    const [l, v = 1] = args(labels, value);
    this.entry(l).value -= v;
  }
}

/** Options of a histogram: its bucket bounds. */
export interface HistogramOptions<L extends string> extends MetricOptions<L> {
  /** Upper bounds of the buckets, ascending. Default: prom-client's (0.005 s to 10 s). */
  buckets?: number[];
}

const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Observations counted into buckets, with their sum and count. */
export class Histogram<L extends string = string> implements MetricFamily {
  readonly name: string;
  private readonly help: string;
  private readonly labelNames: readonly L[];
  private readonly buckets: number[];
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();

  constructor(options: HistogramOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames ?? [];
    this.buckets = [...(options.buckets ?? DEFAULT_BUCKETS)].sort((a, b) => a - b);
    for (const registry of options.registers ?? []) registry.registerMetric(this);
  }

  /** Records `value` in the series of `labels`. */
  observe(labels: Partial<Record<L, string | number>> | number, value?: number): void {
    const [l, v] = args(labels, value);
    const given = (l ?? {}) as Labels;
    const key = this.labelNames.map((name) => String(given[name] ?? '')).join('\u0000');
    let entry = this.series.get(key);
    if (!entry)
      this.series.set(key, (entry = { labels: { ...given }, counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    const observed = v ?? 0;
    // Buckets are cumulative when rendered; here each observation lands in its first bucket only.
    const index = this.buckets.findIndex((bound) => observed <= bound);
    if (index >= 0) entry.counts[index]!++;
    entry.sum += observed;
    entry.count++;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} histogram`];
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += counts[i]!;
        lines.push(`${this.name}_bucket${renderLabels({ ...labels, le: renderValue(bound) })} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket${renderLabels({ ...labels, le: '+Inf' })} ${count}`);
      lines.push(`${this.name}_sum${renderLabels(labels)} ${renderValue(sum)}`);
      lines.push(`${this.name}_count${renderLabels(labels)} ${count}`);
    }
    return lines.join('\n');
  }
}

/**
 * The process and Node.js series of prom-client's default collector, under
 * its names, read at scrape time: CPU, memory, file descriptors, start time,
 * heap and the Node.js version.
 */
export function collectDefaultMetrics(options: { register: Registry }): void {
  const startSeconds = Math.round(performance.timeOrigin / 1000);
  const family = (
    name: string,
    type: string,
    help: string,
    value: () => number | undefined,
    labels: Labels = {},
  ): MetricFamily => ({
    name,
    render() {
      const current = value();
      const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
      if (current !== undefined) lines.push(`${name}${renderLabels(labels)} ${renderValue(current)}`);
      return lines.join('\n');
    },
  });
  const cpu = (): NodeJS.CpuUsage => process.cpuUsage();
  const status = (field: string): number | undefined => {
    try {
      const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
      return match ? Number(match[1]) * 1024 : undefined;
    } catch {
      return undefined;
    }
  };
  const families = [
    family(
      'process_cpu_user_seconds_total',
      'counter',
      'Total user CPU time spent in seconds.',
      () => cpu().user / 1e6,
    ),
    family(
      'process_cpu_system_seconds_total',
      'counter',
      'Total system CPU time spent in seconds.',
      () => cpu().system / 1e6,
    ),
    family('process_cpu_seconds_total', 'counter', 'Total user and system CPU time spent in seconds.', () => {
      const { user, system } = cpu();
      return (user + system) / 1e6;
    }),
    family(
      'process_start_time_seconds',
      'gauge',
      'Start time of the process since unix epoch in seconds.',
      () => startSeconds,
    ),
    family('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.', () => process.memoryUsage.rss()),
    family('process_virtual_memory_bytes', 'gauge', 'Virtual memory size in bytes.', () => status('VmSize')),
    family('process_heap_bytes', 'gauge', 'Process heap size in bytes.', () => status('VmData')),
    family('process_open_fds', 'gauge', 'Number of open file descriptors.', () => {
      try {
        return readdirSync('/proc/self/fd').length - 1;
      } catch {
        return undefined;
      }
    }),
    family(
      'nodejs_heap_size_total_bytes',
      'gauge',
      'Process heap size from Node.js in bytes.',
      () => process.memoryUsage().heapTotal,
    ),
    family(
      'nodejs_heap_size_used_bytes',
      'gauge',
      'Process heap size used from Node.js in bytes.',
      () => process.memoryUsage().heapUsed,
    ),
    family(
      'nodejs_external_memory_bytes',
      'gauge',
      'Node.js external memory size in bytes.',
      () => process.memoryUsage().external,
    ),
    family('nodejs_version_info', 'gauge', 'Node.js version info.', () => 1, {
      version: process.version,
      major: process.versions.node.split('.')[0]!,
      minor: process.versions.node.split('.')[1]!,
      patch: process.versions.node.split('.')[2]!,
    }),
  ];
  for (const metric of families) options.register.registerMetric(metric);
}

async function renderPromClient(metric: PromClientMetric): Promise<string> {
  const { name, help, type, values } = await metric.get();
  const lines = [`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`];
  for (const { value, labels, metricName } of values)
    lines.push(`${metricName ?? name}${renderLabels(labels)} ${renderValue(value)}`);
  return lines.join('\n');
}

function renderLabels(labels: Labels): string {
  const pairs = Object.entries(labels).map(
    ([name, value]) => `${name}="${String(value).replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`,
  );
  return pairs.length ? `{${pairs.join(',')}}` : '';
}

function renderValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}
