// What /ready says about the skins service's own parts: the render farm (critical: when it cannot
// draw, no 3D image can be drawn here, while another instance may) and each upstream as its
// calls found it (degraded only: every instance shares it).
import type { RenderFarm } from '../../renderer/farm.ts';
import type { ReadinessCheck } from '../readiness.ts';
import type { SourceHealth } from './upstream/health.ts';

export function farmCheck(farm: () => RenderFarm | null): ReadinessCheck {
  return {
    name: 'render_farm',
    critical: true,
    run() {
      const current = farm();
      if (!current) return { status: 'ok', detail: 'off (RENDER_WORKERS=0): avatars and textures only' };
      // Not pages alive alone: pages that are all up but cannot draw (a wedged GPU process, a
      // browser that cannot start again) make the farm down too.
      const { state, detail } = current.health();
      return { status: state, detail: `${detail}, ${current.stats().queued} queued` };
    },
  };
}

export function upstreamCheck(health: SourceHealth): ReadinessCheck {
  return {
    name: `upstream_${health.id}`,
    critical: false,
    run() {
      const s = health.snapshot();
      if (!s.enabled) return { status: 'ok', detail: 'switched off' };
      if (s.circuit?.state === 'open') return { status: 'degraded', detail: `circuit open, retry in ${s.circuit.retry_in_s} s; stale entries are served` };
      if (!s.ok) return { status: 'degraded', detail: `${s.consecutive_failures} failures in a row: ${s.last_error ?? 'unknown'}` };
      return { status: 'ok', detail: s.latency_ms === null ? 'no call yet' : `${Math.round(s.latency_ms)} ms` };
    },
  };
}
