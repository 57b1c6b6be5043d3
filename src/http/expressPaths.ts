/** A contract path template as an express route: `/a/{id}/b` → `/a/:id/b`. */
export function toExpressPath(template: string): string {
  return template.replace(/\{([^}]+)\}/g, ':$1');
}
