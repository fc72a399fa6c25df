/**
 * docs/api.md is the API reference of the service as it is: the document `npm run docs:api`
 * renders is the one GET /api/openapi.json serves, and docs/api.md is exactly its rendering.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import { API_DOC_PATH, renderApiReference, servedDocument, type ApiDocument } from '../tools/api-docs.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

describe('the generated API reference', () => {
  let app: TestApp;
  let served: ApiDocument;
  before(async () => {
    app = await startTestApp();
    const res = await app.request('GET', '/api/openapi.json');
    expect(res.status).to.equal(200);
    served = res.body as ApiDocument;
  });
  after(async () => {
    await app.close();
  });

  it('is rendered from the document GET /api/openapi.json serves', () => {
    expect(servedDocument()).to.deep.equal(served);
  });

  it('docs/api.md is what npm run docs:api writes (run it and commit docs/api.md when this fails)', () => {
    expect(fs.readFileSync(API_DOC_PATH, 'utf8')).to.equal(renderApiReference(served));
  });

  it('names every operation of the document under a heading of its own', () => {
    const markdown = fs.readFileSync(API_DOC_PATH, 'utf8');
    const operations = Object.entries(served.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `### ${method.toUpperCase()} ${path}`));
    expect(operations.length).to.be.greaterThan(100);
    for (const heading of operations) expect(markdown.split('\n')).to.include(heading);
  });
});
