/**
 * Everything live the pages share: the status, the traffic log and the stream that keeps both current.
 * Lives at the App's top so Traffic keeps streaming while another page is open.
 */
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react';
import type { ApiClient, ApiRequestError } from '../api/client';
import type { StatusResponse, TrafficEntry } from '../api/contract';
import { connectEvents, type ConnectionState, type EventSourceLike } from '../api/events';
import { initialTrafficLog, TRAFFIC_LIMIT, trafficLogReducer, type TrafficLogState } from '../traffic/log';
import { asApiError } from './useAction';

/** Stream entries are applied in batches: one render per 100 ms at most, whatever the rate. */
const FLUSH_MS = 100;
/** Calls change the per-minute counts: refresh the status at most this often because of them. */
const STATUS_ON_TRAFFIC_MS = 5_000;
const STATUS_POLL_MS = 30_000;

export interface ConsoleData {
  status: StatusResponse | null;
  statusError: ApiRequestError | null;
  refreshStatus: () => Promise<void>;
  connection: ConnectionState;
  traffic: TrafficLogState;
  trafficError: ApiRequestError | null;
  pause: () => void;
  resume: () => void;
  /**
   * Goes up whenever the access lists may have changed (a `state` event of kind `access` or `settings`, a
   * new sender, a reconnect): the Access page reloads its lists when it does.
   */
  accessVersion: number;
  /**
   * Goes up whenever the skills may have changed (a `state` event of kind `skills`, `settings` or `gateway`,
   * a reconnect): the pages that show skills reload them when it does.
   */
  skillsVersion: number;
}

export interface UseConsoleOptions {
  createEventSource?: (url: string) => EventSourceLike;
  onUnauthorized: () => void;
}

export function useConsole(api: ApiClient, options: UseConsoleOptions): ConsoleData {
  const [status, setStatus] = useState<StatusResponse | null>(null);
  const [statusError, setStatusError] = useState<ApiRequestError | null>(null);
  const [connection, setConnection] = useState<ConnectionState>({ status: 'connecting' });
  const [traffic, dispatch] = useReducer(trafficLogReducer, initialTrafficLog);
  const [trafficError, setTrafficError] = useState<ApiRequestError | null>(null);
  const [accessVersion, bumpAccess] = useReducer((version: number) => version + 1, 0);
  const [skillsVersion, bumpSkills] = useReducer((version: number) => version + 1, 0);
  const optionsRef = useRef(options);
  useEffect(() => {
    optionsRef.current = options;
  });

  const inFlight = useRef<Promise<void> | null>(null);
  const again = useRef(false);
  const refreshStatus = useCallback((): Promise<void> => {
    // Coalesce: one request at a time, and one more after it if asked meanwhile.
    if (inFlight.current) {
      again.current = true;
      return inFlight.current;
    }
    const run = async (): Promise<void> => {
      try {
        setStatus(await api.status());
        setStatusError(null);
      } catch (error) {
        setStatusError(asApiError(error));
      }
      if (again.current) {
        again.current = false;
        await run();
      }
    };
    inFlight.current = run().finally(() => {
      inFlight.current = null;
    });
    return inFlight.current;
  }, [api]);

  useEffect(() => {
    let disposed = false;
    let batch: TrafficEntry[] = [];
    let flushTimer: ReturnType<typeof setTimeout> | undefined;
    let lastTrafficRefresh = 0;
    let stateTimer: ReturnType<typeof setTimeout> | undefined;
    let loadToken = 0;

    const flush = () => {
      flushTimer = undefined;
      if (disposed || batch.length === 0) return;
      const entries = batch.length > TRAFFIC_LIMIT ? batch.slice(-TRAFFIC_LIMIT) : batch;
      batch = [];
      dispatch({ type: 'received', entries });
      if (Date.now() - lastTrafficRefresh > STATUS_ON_TRAFFIC_MS) {
        lastTrafficRefresh = Date.now();
        void refreshStatus();
      }
    };

    const loadTraffic = async () => {
      const mine = ++loadToken;
      try {
        const response = await api.traffic({ limit: TRAFFIC_LIMIT });
        if (disposed || mine !== loadToken) return;
        dispatch({ type: 'loaded', entries: response.entries, total: response.total });
        setTrafficError(null);
      } catch (error) {
        if (disposed || mine !== loadToken) return;
        setTrafficError(asApiError(error));
        // Show at least what streams in from now on.
        dispatch({ type: 'loaded', entries: [], total: 0 });
      }
    };

    const stream = connectEvents({
      url: api.eventsUrl(),
      createEventSource: optionsRef.current.createEventSource,
      onConnection: (state) => {
        if (!disposed) setConnection(state);
      },
      onOpen: () => {
        // Whatever happened while disconnected (or in a previous console run) is reloaded.
        batch = [];
        dispatch({ type: 'reset' });
        void loadTraffic();
        void refreshStatus();
        bumpAccess();
        bumpSkills();
      },
      onEnvelope: (entry) => {
        batch.push(entry);
        flushTimer ??= setTimeout(flush, FLUSH_MS);
      },
      onState: (event) => {
        // Settings carry the policy and the expiry the Access page shows.
        if (event.kind === 'access' || event.kind === 'settings') bumpAccess();
        // A skill's agent is checked with the gateway; the skills are a setting.
        if (event.kind === 'skills' || event.kind === 'settings' || event.kind === 'gateway') bumpSkills();
        clearTimeout(stateTimer);
        stateTimer = setTimeout(() => void refreshStatus(), 150);
      },
      onAccess: () => bumpAccess(),
      onUnauthorized: () => optionsRef.current.onUnauthorized(),
      probe: async () => {
        try {
          await api.status();
          return 'ok';
        } catch (error) {
          const status = asApiError(error).status;
          return status === 401 ? 'unauthorized' : 'down';
        }
      },
    });
    void refreshStatus();
    const poll = setInterval(() => void refreshStatus(), STATUS_POLL_MS);
    return () => {
      disposed = true;
      stream.close();
      clearTimeout(flushTimer);
      clearTimeout(stateTimer);
      clearInterval(poll);
    };
  }, [api, refreshStatus]);

  const pause = useCallback(() => dispatch({ type: 'pause' }), []);
  const resume = useCallback(() => dispatch({ type: 'resume' }), []);

  return useMemo(
    () => ({
      status,
      statusError,
      refreshStatus,
      connection,
      traffic,
      trafficError,
      pause,
      resume,
      accessVersion,
      skillsVersion,
    }),
    [
      status,
      statusError,
      refreshStatus,
      connection,
      traffic,
      trafficError,
      pause,
      resume,
      accessVersion,
      skillsVersion,
    ],
  );
}
