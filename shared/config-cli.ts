// `npm run config`: the configuration as every entry point reads it (environment, then the env file),
// credentials masked; a configuration error is the CLI's JSON error on stderr.
import { ConfigError, envFile, loadConfig, printableConfig } from './config.ts';

try {
  const config = loadConfig();
  const file = envFile();
  process.stdout.write(JSON.stringify({ env_file: file, config: printableConfig(config) }, null, 2) + '\n');
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(JSON.stringify({ error: err.message }) + '\n');
  process.exitCode = 2;
}
