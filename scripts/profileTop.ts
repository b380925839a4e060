/**
 * `node --import tsx scripts/profileTop.ts <file.cpuprofile> [top]`: where a V8 CPU profile's time went (by place,
 * the top functions by self and by inclusive time, the longest stretches the event loop was held), as `npm run bench:soak` prints it with BENCH_CPU_PROF=1.
 * Names after `top` print where those functions' self time comes from (`writev fdatasync`). Reads any .cpuprofile, such as those `node --cpu-prof` or `BENCH_CPU_PROF=1 npm run bench:register` write.
 */
import fs from 'node:fs';
import { formatCallers, formatProfile, formatStretches, summarizeProfile } from './bench/cpuProfile';

const [file, top, ...callersOf] = process.argv.slice(2);
if (!file) {
  console.error('usage: node --import tsx scripts/profileTop.ts <file.cpuprofile> [top] [function name whose callers to show ...]');
  process.exit(2);
}
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
console.log(`${formatProfile(summarizeProfile(profile), Number(top ?? 15))}\n\n${formatStretches(profile, 5, 8)}`);
for (const name of callersOf) console.log(`\n${formatCallers(profile, name, 4, 8)}`);
