/** The part of mjml 5's API the template compiler uses (the package ships no types). */
declare module 'mjml' {
  interface MjmlError {
    line: number;
    message: string;
    tagName: string;
    formattedMessage: string;
  }
  interface MjmlOptions {
    filePath?: string;
    actualPath?: string;
    includePath?: string | string[];
    ignoreIncludes?: boolean;
    validationLevel?: 'strict' | 'soft' | 'skip';
    minify?: boolean;
    minifyOptions?: Record<string, unknown>;
    beautify?: boolean;
    keepComments?: boolean;
    fonts?: Record<string, string>;
  }
  export default function mjml2html(
    mjml: string,
    options?: MjmlOptions,
  ): Promise<{ html: string; errors: MjmlError[] }>;
}
