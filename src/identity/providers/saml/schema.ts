/**
 * XML schema validation of every SAML message the service reads, against the OASIS SAML 2.0
 * protocol and assertion schemas with the W3C XML Signature and Encryption schemas they import
 * (copied beside this file). libxml2 runs as WebAssembly in a worker thread (xmllint-wasm): no
 * Java, no native binary, and nothing it does can take the process down. samlify's own
 * validator package (node-xmllint, 2015) is not used: each call adds a process-wide exception
 * listener, prints to stdout and arms a `process.exit` on the next stdout drain.
 */
import fs from 'node:fs';
import { validateXML } from 'xmllint-wasm';

const schemaFile = (fileName: string) => ({ fileName, contents: fs.readFileSync(new URL(`./schemas/${fileName}`, import.meta.url), 'utf8') });

const PROTOCOL_SCHEMA = schemaFile('saml-schema-protocol-2.0.xsd');
const IMPORTED = ['saml-schema-assertion-2.0.xsd', 'xmldsig-core-schema.xsd', 'xenc-schema.xsd', 'XMLSchema.dtd', 'datatypes.dtd'].map(schemaFile);

/** True when `xml` is a valid SAML 2.0 protocol message. */
export async function isValidSamlXml(xml: string): Promise<boolean> {
  const result = await validateXML({ xml: [{ fileName: 'message.xml', contents: xml }], schema: [PROTOCOL_SCHEMA], preload: IMPORTED });
  return result.valid;
}
