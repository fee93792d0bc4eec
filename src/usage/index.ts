export { countersFor, subjectOf, type CounterSpec } from './budgets.js';
export { costNano, formatUsd, NANO_PER_USD, usdOf } from './cost.js';
export { describeReset, periodAt } from './periods.js';
export { BUILT_IN_PRICES_DATE, priceFor, type Price } from './prices.js';
export { BudgetRefusedError, UsageService, measurePrompt, type BudgetRefusal, type RaiseApprovals } from './service.js';
export { UsageStore, usageMigrations } from './store.js';
export type { UsageAttribution, UsageRecord } from './types.js';
export { costText, REPORT_DIMENSIONS, reportCsv, reportTable, usageReport, type ReportDimension, type UsageReport } from './report.js';
