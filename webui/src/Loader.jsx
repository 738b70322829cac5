/** A spinner with a text for screen readers. */
export default function Loader({ label }) {
  return (
    <div className="loader" role="status">
      <span className="spinner" aria-hidden="true" />
      <span>{label}</span>
    </div>
  );
}
