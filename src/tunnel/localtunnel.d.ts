// The localtunnel package ships no types; this declares the part of its client the app uses.
declare module 'localtunnel/lib/Tunnel.js' {
  import { EventEmitter } from 'node:events';

  export interface TunnelOptions {
    port: number;
    host?: string;
    subdomain?: string;
    local_host?: string;
  }

  export interface TunnelInfo {
    name: string;
    url: string;
    max_conn: number;
    remote_host: string | null;
    remote_ip?: string;
    remote_port: number;
    local_port: number;
  }

  export interface TunnelServerReply {
    id: string;
    url: string;
    port: number;
    max_conn_count?: number;
    ip?: string;
  }

  export default class Tunnel extends EventEmitter {
    constructor(options: TunnelOptions);
    opts: TunnelOptions;
    closed: boolean;
    url?: string;
    clientId?: string;
    _getInfo(body: TunnelServerReply): TunnelInfo;
    _init(callback: (error: Error | null, info?: TunnelInfo) => void): void;
    open(callback: (error?: Error) => void): void;
    close(): void;
  }
}
