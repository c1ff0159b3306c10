// Prints the OpenAPI document (CI lints it with Redocly).
import { loadConfig } from '../shared/config.ts';
import { openApiDocument } from './routes/index.ts';

process.stdout.write(JSON.stringify(openApiDocument(loadConfig().PUBLIC_BASE_URL), null, 2) + '\n');
