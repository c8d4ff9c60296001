// Spectral function: the target (a media type object, a parameter or a
// schema) shows an example: `example`, or a non-empty `examples`, on itself
// or on its `schema`. With `exceptBinary`, a schema with a property of
// format `binary` needs none (an example of raw bytes shows nothing).
// Runs on the resolved document, so a schema reached by `$ref` counts.

function shows(node) {
  if (node === null || typeof node !== 'object') return false;
  if (node.example !== undefined) return true;
  const { examples } = node;
  if (Array.isArray(examples)) return examples.length > 0;
  return examples !== null && typeof examples === 'object' && Object.keys(examples).length > 0;
}

function holdsBinary(schema) {
  const properties = schema && typeof schema === 'object' ? schema.properties : undefined;
  if (!properties || typeof properties !== 'object') return false;
  return Object.values(properties).some((p) => p && typeof p === 'object' && p.format === 'binary');
}

export default function hasExample(target, options) {
  if (target === null || typeof target !== 'object') return [];
  if (options && options.exceptBinary && holdsBinary(target)) return [];
  if (shows(target) || shows(target.schema)) return [];
  return [{ message: `${options && options.what ? options.what : 'This'} has no example (\`example\` or \`examples\`).` }];
}
