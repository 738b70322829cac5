/** One numbered step of an order page. */
export default function Step({ n, id, title, children }) {
  return (
    <li className="step card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>
        <span className="step-n" aria-hidden="true">
          {n}
        </span>
        <span>{title}</span>
      </h2>
      {children}
    </li>
  );
}
