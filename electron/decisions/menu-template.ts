import type { MenuItemConstructorOptions } from 'electron';
import { HEALTH_TITLES } from '../../src/protocol/console-health.js';
import { healthOf, publicUrlOf, type ShellState } from './shell-state.js';
import { updateMenuItems, type UpdateActions } from './updates.js';

export interface MenuActions extends UpdateActions {
  copyPublicUrl(url: string): void;
  openConsole(): void;
  /** Opens the console on its Access page, where waiting senders are approved or denied. */
  openAccess(): void;
  runSelfTest(): void;
  startTunnel(): void;
  stopTunnel(): void;
  register(): void;
  rotateKey(): void;
  setStartAtLogin(enabled: boolean): void;
  quit(): void;
}

/** The tray menu for a state: a plain template, so it is built and tested without Electron. */
export function menuTemplate(state: ShellState, actions: MenuActions): MenuItemConstructorOptions[] {
  const { health, reason } = healthOf(state);
  const url = publicUrlOf(state);
  const tunnelRunning = state.tunnel.status !== 'off' && state.tunnel.status !== 'failed';
  const registered = state.registry.status === 'registered';
  // SAMVAD senders and A2A callers that knocked alike wait on the Access page.
  const waiting = state.access.pending + (state.access.knocks?.waiting ?? 0);
  return [
    { id: 'status', label: `${HEALTH_TITLES[health]}: ${shorten(reason, 60)}`, enabled: false },
    {
      id: 'access',
      label: `${waiting} sender${waiting === 1 ? '' : 's'} waiting for approval…`,
      visible: waiting > 0,
      click: () => actions.openAccess(),
    },
    {
      id: 'public-url',
      label: url ? `Copy public URL (${shorten(url, 40)})` : 'No public URL yet',
      enabled: url !== undefined,
      click: () => url && actions.copyPublicUrl(url),
    },
    { type: 'separator' },
    { id: 'open-console', label: 'Open console', click: () => actions.openConsole() },
    {
      id: 'self-test',
      label: 'Test from the internet',
      enabled: url !== undefined,
      click: () => actions.runSelfTest(),
    },
    tunnelRunning
      ? { id: 'tunnel', label: 'Stop tunnel', click: () => actions.stopTunnel() }
      : { id: 'tunnel', label: 'Start tunnel', click: () => actions.startTunnel() },
    {
      id: 'register',
      label: registered ? 'Register again' : 'Register in the agent registry',
      enabled: url !== undefined && state.registry.status !== 'registering',
      click: () => actions.register(),
    },
    { id: 'rotate-key', label: 'Rotate signing key', click: () => actions.rotateKey() },
    { type: 'separator' },
    {
      id: 'start-at-login',
      label: 'Start at login',
      type: 'checkbox',
      checked: state.startAtLogin,
      click: (item) => actions.setStartAtLogin(item.checked),
    },
    ...(state.update ? updateMenuItems(state.update, actions) : []),
    { type: 'separator' },
    { id: 'quit', label: 'Quit Agent Bridge', role: 'quit', click: () => actions.quit() },
  ];
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
