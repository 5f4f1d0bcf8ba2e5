import { Menu, Tray, nativeImage } from 'electron';
import { join } from 'node:path';
import { menuTemplate, type MenuActions } from './decisions/menu-template.js';
import type { ShellState } from './decisions/shell-state.js';
import { trayIconFile, trayModel } from './decisions/tray-model.js';

/** The tray icon and menu; everything it shows comes from the pure decisions. */
export class AppTray {
  readonly tray: Tray;

  constructor(
    private readonly iconDir: string,
    private readonly actions: MenuActions,
    onClick: () => void,
  ) {
    this.tray = new Tray(this.icon('offline'));
    this.tray.on('click', onClick);
  }

  update(state: ShellState): void {
    const model = trayModel(state);
    this.tray.setImage(this.icon(model.icon));
    this.tray.setToolTip(model.tooltip);
    this.tray.setContextMenu(Menu.buildFromTemplate(menuTemplate(state, this.actions)));
  }

  destroy(): void {
    this.tray.destroy();
  }

  private icon(health: Parameters<typeof trayIconFile>[0]) {
    const image = nativeImage.createFromPath(join(this.iconDir, trayIconFile(health, 1)));
    image.addRepresentation({
      scaleFactor: 2,
      buffer: nativeImage.createFromPath(join(this.iconDir, trayIconFile(health, 2))).toPNG(),
    });
    return image;
  }
}
