/**
 * Chart.js line charts (the pass@k and maj@k curves), registered once and loaded lazily by
 * LineChart like the dashboard's bar charts (chart-setup.ts); the same Chart class and defaults.
 */
import { LineController, LineElement, PointElement } from 'chart.js';
import { Chart } from './chart-setup.ts';

Chart.register(LineController, LineElement, PointElement);

export { Chart };
