export class NodeHub {}
