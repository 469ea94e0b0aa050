// The module `npm run build` generates into dist/ (src/scaffold/precompile.ts): templates/**/*.hbs precompiled by Handlebars, keyed by path under templates/.
declare const templates: Readonly<Record<string, TemplateSpecification>>;
export default templates;
