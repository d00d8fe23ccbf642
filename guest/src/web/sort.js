// `Array.prototype.sort` and `toSorted` with a comparator, calling it in
// exactly the order V8 does (`native.sortIndexed`, the TimSort of
// `sort.rs`), so that a comparator that is not consistent orders
// an array as Node orders it. Models write such comparators all the time:
// `(a, b) => a.k < b.k ? -1 : 1` never answers 0, and `(a, b) => a > b`
// answers a boolean; QuickJS's own sort ordered their ties otherwise. The
// values are taken as V8 (and the standard) take them: `undefined` is
// never passed to the comparator and goes last, and `sort` skips holes and
// leaves them at the array's end. Without a comparator QuickJS's own sort
// stays: string order is consistent, so it orders as V8's does.
(function (native, shared) {
  "use strict";
  const ArrayProto = Array.prototype;
  const plainSort = ArrayProto.sort;
  const plainToSorted = ArrayProto.toSorted;
  const apply = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const ObjectCtor = Object;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const sortIndexed = native.sortIndexed;
  const method = (owner, name, f) =>
    defineProperty(owner, name, { __proto__: null, value: f, writable: true, enumerable: false, configurable: true });

  // ToLength(Get(o, "length")): the standard's length of an array-like,
  // for the files after this one too.
  const MAX_LENGTH = 2 ** 53 - 1;
  const lengthOf = (o) => {
    const n = +o.length;
    return n > 0 ? (n < MAX_LENGTH ? n - (n % 1) : MAX_LENGTH) : 0;
  };
  shared.lengthOf = lengthOf;

  // ToObject, as the standard has it: `null` and `undefined` throw.
  const toObject = (value, name) => {
    if (value === null || value === undefined) {
      throw new TypeErrorCtor(`Array.prototype.${name} called on null or undefined`);
    }
    return ObjectCtor(value);
  };

  const notAComparator = () =>
    new TypeErrorCtor("The comparison function must be either a function or undefined");

  method(ArrayProto, "sort", {
    sort(comparefn) {
      if (comparefn === undefined) return apply(plainSort, this, []);
      if (typeof comparefn !== "function") throw notAComparator();
      const o = toObject(this, "sort");
      return sortIndexed(o, lengthOf(o), comparefn, true, false);
    },
  }.sort);

  method(ArrayProto, "toSorted", {
    toSorted(comparefn) {
      if (comparefn === undefined) return apply(plainToSorted, this, []);
      if (typeof comparefn !== "function") throw notAComparator();
      const o = toObject(this, "toSorted");
      const len = lengthOf(o);
      if (len > 2 ** 32 - 1) throw new RangeErrorCtor("Invalid array length");
      return sortIndexed(o, len, comparefn, false, true);
    },
  }.toSorted);
})
