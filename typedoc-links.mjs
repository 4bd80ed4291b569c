// A TypeDoc plugin: README and the guides link to each other by absolute
// GitHub addresses (so that links work on the npm page too); in the reference,
// which holds every guide as a page of its own, those links go to that page.
import { PageEvent } from 'typedoc';

const GUIDE = /https:\/\/github\.com\/animal-store\/sdk\/blob\/main\/docs\/([\w-]+)\.md/g;

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.renderer.on(PageEvent.END, (page) => {
    if (!page.contents) return;
    const up = '../'.repeat(page.url.split('/').length - 1);
    page.contents = page.contents.replace(GUIDE, (_, name) => `${up}documents/${name}.html`);
  });
}
