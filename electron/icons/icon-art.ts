import type { Health } from '../decisions/shell-state.js';

/**
 * The one source of every icon: the app mark drawn as vector shapes, rendered at any size with 4x4
 * supersampling. A bridge arc over a rounded square; tray variants add a status dot.
 */
const BACKGROUND: [number, number, number] = [67, 56, 202]; // indigo
const STATUS: Record<Health, [number, number, number]> = {
  online: [22, 163, 74],
  degraded: [217, 119, 6],
  offline: [113, 113, 122],
  error: [220, 38, 38],
};

type Shape = (x: number, y: number) => [number, number, number, number] | undefined;

export function renderIcon(size: number, status?: Health): Uint8Array {
  const shapes: Shape[] = [roundedSquare, bridge];
  if (status) shapes.push(statusDot(STATUS[status]));
  const pixels = new Uint8Array(size * size * 4);
  const samples = 4;
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = 0; sy < samples; sy++) {
        for (let sx = 0; sx < samples; sx++) {
          // Normalised coordinates 0..1 of this sub-sample.
          const x = (px + (sx + 0.5) / samples) / size;
          const y = (py + (sy + 0.5) / samples) / size;
          let colour: [number, number, number, number] = [0, 0, 0, 0];
          for (const shape of shapes) colour = over(shape(x, y), colour);
          r += colour[0] * colour[3];
          g += colour[1] * colour[3];
          b += colour[2] * colour[3];
          a += colour[3];
        }
      }
      const i = (py * size + px) * 4;
      const alpha = a / (samples * samples);
      pixels[i] = a ? Math.round(r / a) : 0;
      pixels[i + 1] = a ? Math.round(g / a) : 0;
      pixels[i + 2] = a ? Math.round(b / a) : 0;
      pixels[i + 3] = Math.round(alpha * 255);
    }
  }
  return pixels;
}

function over(top: [number, number, number, number] | undefined, below: [number, number, number, number]) {
  if (!top || top[3] === 0) return below;
  return top[3] >= 1
    ? top
    : ([top[0], top[1], top[2], Math.max(top[3], below[3])] as [number, number, number, number]);
}

function roundedSquare(x: number, y: number): [number, number, number, number] | undefined {
  const r = 0.2;
  const dx = Math.max(Math.abs(x - 0.5) - (0.5 - r), 0);
  const dy = Math.max(Math.abs(y - 0.5) - (0.5 - r), 0);
  return dx * dx + dy * dy <= r * r ? [...BACKGROUND, 1] : undefined;
}

function bridge(x: number, y: number): [number, number, number, number] | undefined {
  const white: [number, number, number, number] = [255, 255, 255, 1];
  // The deck.
  if (y > 0.62 && y < 0.7 && x > 0.16 && x < 0.84) return white;
  // The arc: a ring segment above the deck.
  const d = Math.hypot(x - 0.5, (y - 0.66) * 1.25);
  if (y < 0.66 && d > 0.25 && d < 0.33) return white;
  // Two pillars.
  if (y > 0.4 && y < 0.8 && (Math.abs(x - 0.3) < 0.035 || Math.abs(x - 0.7) < 0.035)) return white;
  return undefined;
}

function statusDot(colour: [number, number, number]): Shape {
  return (x, y) => {
    const d = Math.hypot(x - 0.78, y - 0.22);
    if (d < 0.2) return [...colour, 1];
    if (d < 0.25) return [255, 255, 255, 1];
    return undefined;
  };
}
