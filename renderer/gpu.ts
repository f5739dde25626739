// Whether the render pages draw on a GPU, and through which ANGLE backend. Kept apart from the
// browser code so the configuration can name the choices without loading puppeteer.
import { existsSync, readdirSync } from 'node:fs';

export const GPU_MODES = ['auto', 'on', 'off'] as const;
export type GpuMode = (typeof GPU_MODES)[number];
/** The ANGLE backend WebGL runs on when a GPU is used: the driver's EGL (OpenGL or GLES), or Vulkan. */
export const GPU_BACKENDS = ['gl-egl', 'gles-egl', 'vulkan'] as const;
export type GpuBackend = (typeof GPU_BACKENDS)[number];
export const DEFAULT_GPU_BACKEND: GpuBackend = 'gl-egl';

/**
 * The rule of gpu 'auto': a GPU is assumed when the host exposes an NVIDIA device or a DRM render
 * node (/dev/dri/renderD*), as a container does when it is given a GPU.
 */
function gpuPresent(): boolean {
  if (existsSync('/dev/nvidia0')) return true;
  try {
    return readdirSync('/dev/dri').some((name) => name.startsWith('renderD'));
  } catch {
    return false;
  }
}

/** Whether a mode means the GPU on this host. */
export function wantsGpu(mode: GpuMode): boolean {
  return mode === 'on' || (mode === 'auto' && gpuPresent());
}
