// `npm run config`: the configuration as this process would read it, credentials masked.
import { loadConfig, printableConfig } from './config.ts';

process.stdout.write(JSON.stringify(printableConfig(loadConfig()), null, 2) + '\n');
