// The operator CLI as operators run it (`npm run cli -- <args>`): a real subprocess of shared/cli/main.ts with
// only PATH, HOME and the given environment (a database URL, a secrets key...), its exit code and output.
import { spawn } from 'node:child_process';
import { codePath, loaderArgs, root } from '../../shared/layout.ts';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...loaderArgs, codePath('shared/cli/main.ts'), ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
