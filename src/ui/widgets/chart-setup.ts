/**
 * Chart.js with only what the dashboard draws (bar charts), registered once. Loaded lazily by
 * BarChart so the first page does not pay for it. Chart.js draws on a canvas and needs neither
 * eval nor inline scripts, so it runs under the page's Content-Security-Policy.
 */
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);
Chart.defaults.font.family = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
Chart.defaults.color = '#333';

export { Chart };
