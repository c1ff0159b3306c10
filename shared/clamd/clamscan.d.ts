// clamscan 2.4 ships no types: the part of its API the receive scanner uses (its README, "API").
declare module 'clamscan' {
  import type { Readable } from 'node:stream';

  interface ClamdscanOptions {
    socket?: string | false;
    host?: string | false;
    port?: number | false;
    /** Socket idle timeout in ms. */
    timeout?: number;
    /** Fall back to running a local clamscan binary when clamd cannot be reached. */
    localFallback?: boolean;
    path?: string;
    /** Skip the PING of clamd during init(). */
    bypassTest?: boolean;
    active?: boolean;
  }

  interface NodeClamOptions {
    debugMode?: boolean;
    preference?: 'clamdscan' | 'clamscan';
    clamscan?: { active?: boolean; path?: string };
    clamdscan?: ClamdscanOptions;
  }

  interface ScanResult {
    /** null: clamd answered something that is neither OK nor FOUND (a timeout). */
    isInfected: boolean | null;
    viruses: string[];
    file: string | null;
    resultString?: string;
    timeout?: boolean;
  }

  class NodeClam {
    init(options?: NodeClamOptions): Promise<NodeClam>;
    scanStream(stream: Readable): Promise<ScanResult>;
    getVersion(): Promise<string>;
  }

  export default NodeClam;
}
