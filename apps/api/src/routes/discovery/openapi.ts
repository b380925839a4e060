import { openApiDocumentResponse } from '@svc/contracts';
import { buildOpenApi } from '../../openapi';
import { generatedDocument } from './generatedDocument';

export default generatedDocument({
  path: '/openapi.json',
  summary: 'OpenAPI 3.1 description of this interface',
  response: openApiDocumentResponse,
  contentType: 'application/json',
  render: (routes, config) => JSON.stringify(buildOpenApi(routes, config.publicUrl, config)),
});
