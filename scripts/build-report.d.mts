/** Types of scripts/build-report.mjs (plain JavaScript: it runs before anything is built). */
export declare const ROOT: string;
export declare const REPORT_TEMPLATE: string;
export declare const REPORT_INPUTS: string[];
export declare function reportTemplateStale(file?: string): boolean;
export declare function reportCsp(scriptHash: string): string;
export declare function withCsp(html: string): string;
export declare function buildReportTemplate(outFile?: string): Promise<string>;
export declare function ensureReportTemplate(outFile?: string): Promise<string>;
export declare function newestMtime(p: string): number;
