// `npm run build:icons`: renders every icon from the one source (electron/icons/icon-art.ts) into
// dist/electron/icons: the app icon electron-builder turns into .icns/.ico, and the tray icon per state.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Health } from '../electron/decisions/shell-state.js';
import { trayIconFile } from '../electron/decisions/tray-model.js';
import { renderIcon } from '../electron/icons/icon-art.js';
import { encodePng } from '../electron/icons/png.js';

const OUT = fileURLToPath(new URL('../dist/electron/icons/', import.meta.url));
mkdirSync(OUT, { recursive: true });

const write = (name: string, size: number, status?: Health) =>
  writeFileSync(join(OUT, name), encodePng(size, size, renderIcon(size, status)));

write('icon.png', 512);
write('window.png', 64);
for (const health of ['online', 'degraded', 'offline', 'error'] as const) {
  write(trayIconFile(health, 1), 16, health);
  write(trayIconFile(health, 2), 32, health);
}
console.log(`icons written to ${OUT}`);
