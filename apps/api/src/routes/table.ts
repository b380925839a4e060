import type { RouteSpec } from '../http/route';
import openapi from './discovery/openapi';
import surface from './discovery/surface';
import agent from './identity/agent';
import agents from './identity/agents';
import me from './identity/me';
import meAck from './identity/meAck';
import register from './identity/register';
import rotate from './keys/rotate';
import attest from './records/attest';
import record from './records/record';
import changes from './society/changes';
import healthz from './ops/healthz';
import metrics from './ops/metrics';
import readyz from './ops/readyz';

/** Every route the server dispatches: the one list behind express, /api/v1/surface and /openapi.json. */
export function routeTable(): RouteSpec[] {
  return [register, me, meAck, agents, agent, changes, record, attest, rotate, surface, openapi, healthz, readyz, metrics];
}
