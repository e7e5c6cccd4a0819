// The tests and tools run on the Node the functions are deployed on (the Lambda runtime nodejs24.x), so a test passes on
// the runtime it protects. `npm ci` installs that Node into node_modules on Linux (x64, arm64), and npm puts
// node_modules/.bin first on every script's PATH; elsewhere the machine's own Node must be new enough. The version is
// package.json's `engines`, said once.
import { readFileSync } from 'node:fs';

const wanted = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).engines.node;
const minimum = Number(/(\d+)/.exec(wanted)?.[1]);
const major = Number(process.versions.node.split('.')[0]);
if (!(major >= minimum)) {
  console.error(
    `notifier: this is Node ${process.versions.node}; the tests and tools run on Node ${wanted} (the Lambda runtime). ` +
      `On Linux x64 or arm64 \`npm ci\` installs it into node_modules; run the command through npm (npm test, npm start). ` +
      `Elsewhere install Node ${minimum} (for example \`nvm install ${minimum}\`).`,
  );
  process.exit(1);
}
