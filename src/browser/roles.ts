/**
 * The three role classes of the role snapshot (reference D1). Interactive roles always get a
 * ref, content roles only when they have a name, structural roles never, and unnamed structural
 * lines disappear in compact mode.
 */
export const INTERACTIVE_ROLES: ReadonlySet<string> = new Set([
  'button',
  'checkbox',
  'combobox',
  'link',
  'listbox',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'option',
  'radio',
  'searchbox',
  'slider',
  'spinbutton',
  'switch',
  'tab',
  'textbox',
  'treeitem',
]);

export const CONTENT_ROLES: ReadonlySet<string> = new Set([
  'article',
  'cell',
  'columnheader',
  'gridcell',
  'heading',
  'listitem',
  'main',
  'navigation',
  'region',
  'rowheader',
]);

export const STRUCTURAL_ROLES: ReadonlySet<string> = new Set([
  'application',
  'directory',
  'document',
  'generic',
  'grid',
  'group',
  'ignored',
  'list',
  'menu',
  'menubar',
  'none',
  'presentation',
  'row',
  'rowgroup',
  'table',
  'tablist',
  'toolbar',
  'tree',
  'treegrid',
]);
