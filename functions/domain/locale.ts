/** The locales notifier writes in, and the BCP 47 locale each formats amounts and dates with. Pure, dependency-free. */
export const LOCALES = ['en', 'ja'] as const;
export type Locale = (typeof LOCALES)[number];

export const INTL_LOCALES: Readonly<Record<Locale, string>> = { en: 'en-US', ja: 'ja-JP' };
