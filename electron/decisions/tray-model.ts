import { healthOf, type Health, type ShellState } from './shell-state.js';

export interface TrayModel {
  icon: Health;
  /** Windows cuts tooltips at 127 characters. */
  tooltip: string;
}

const MAX_TOOLTIP = 127;

/** The tray icon follows the app's health; the tooltip says why. */
export function trayModel(state: ShellState): TrayModel {
  const { health, reason } = healthOf(state);
  const tooltip = `Agent Bridge: ${health}. ${reason}`;
  return {
    icon: health,
    tooltip: tooltip.length > MAX_TOOLTIP ? `${tooltip.slice(0, MAX_TOOLTIP - 1)}…` : tooltip,
  };
}

/** The icon file for a health state and a scale (1x, 2x for HiDPI). */
export function trayIconFile(health: Health, scale: 1 | 2 = 1): string {
  return scale === 2 ? `tray-${health}@2x.png` : `tray-${health}.png`;
}
