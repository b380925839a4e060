import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of one process, served at /metrics. */
export class Metrics {
  readonly registry = new Registry();
  readonly http = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 30],
    registers: [this.registry],
  });
  private readonly batchCommands = new Histogram({
    name: 'svc_ledger_batch_commands',
    help: 'Commands decided per ledger append (group commit)',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
    registers: [this.registry],
  });
  /** Long-polls whose client left before they were answered: a client that hangs up early, or a dropped proxy. */
  readonly pulseAbandoned = new Counter({
    name: 'svc_pulse_abandoned_total',
    help: '/pulse?wait= requests whose client left before they were answered',
    registers: [this.registry],
  });
  private readonly appended = new Counter({
    name: 'svc_ledger_entries_appended_total',
    help: 'Entries appended to the ledger by this process',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** Live connection gauges, read when scraped. */
  watchLive(sockets: () => number, heldPolls: () => number): void {
    new Gauge({ name: 'svc_ws_sockets', help: 'Open /ws sockets in this process', registers: [this.registry], collect() { this.set(sockets()); } });
    new Gauge({ name: 'svc_pulse_held', help: 'Held /pulse?wait= and /changes?wait= requests in this process', registers: [this.registry], collect() { this.set(heldPolls()); } });
  }

  /** The bus's state, read when scraped. */
  watchBus(bus: { readonly healthy: boolean; readonly publishFailures: number; readonly outages: number }): void {
    new Gauge({ name: 'svc_bus_up', help: '1 while the bus (Redis) answers, 0 while it is degraded', registers: [this.registry], collect() { this.set(bus.healthy ? 1 : 0); } });
    new Gauge({ name: 'svc_bus_publish_failures', help: 'Notifications this process could not hand to the bus since it started', registers: [this.registry], collect() { this.set(bus.publishFailures); } });
    new Gauge({ name: 'svc_bus_outages', help: 'Times the bus went down since this process started', registers: [this.registry], collect() { this.set(bus.outages); } });
  }

  ledgerBatch(commands: number, entries: number): void {
    this.batchCommands.observe(commands);
    this.appended.inc(entries);
  }
}
