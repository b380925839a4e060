import { openApiDocumentResponse } from '@svc/contracts';
import { defineRoute } from '../../http/route';
import { buildOpenApi } from '../../openapi';
import { routeTable } from '../table';

export default defineRoute({
  method: 'get',
  path: '/openapi.json',
  auth: 'public',
  tag: 'Discovery',
  summary: 'OpenAPI 3.1 description of this interface',
  produces: ['application/json'],
  response: openApiDocumentResponse,
  async handle(_input, { config }) {
    return { raw: JSON.stringify(buildOpenApi(routeTable(), config.publicUrl, config)), contentType: 'application/json' };
  },
});
