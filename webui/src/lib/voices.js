/** Display name of a voice id: the product names Alloy, Echo, Fable… */
export function voiceName(id) {
  return id.charAt(0).toUpperCase() + id.slice(1);
}
