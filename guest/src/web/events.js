// Event, CustomEvent, EventTarget, AbortController and AbortSignal, as in a
// Worker.
// Also sets up what the other files share: `shared.define` (a global as
// the built-in classes are: writable, configurable, not enumerable) and
// `shared.DOMException`.
(function (native, shared) {
  "use strict";
  const StringCtor = String;
  const DOMExceptionCtor = DOMException;
  // An abort's reason, made on the program's behalf and not thrown: made
  // so that its stack does not stand for where the job's next throw was.
  const unnoted = native.unnoted;
  const unthrown = (message, name) => unnoted(() => new DOMExceptionCtor(message, name));
  const { defineProperty, freeze } = Object;
  const apply = Reflect.apply;
  const queue = queueMicrotask;
  const arrayPush = Array.prototype.push, arrayPop = Array.prototype.pop;
  const arraySlice = Array.prototype.slice;
  const arraySplice = Array.prototype.splice;
  const MapCtor = Map, mapGet = Map.prototype.get, mapSet = Map.prototype.set;
  const mapDelete = Map.prototype.delete, mapForEach = Map.prototype.forEach;
  const SetCtor = Set, setAdd = Set.prototype.add, setHas = Set.prototype.has;
  const setDelete = Set.prototype.delete;
  const WeakRefCtor = WeakRef, deref = WeakRef.prototype.deref;
  // `#field in v` throws "invalid 'in' operand" for a primitive.
  const isObject = (v) => v !== null && (typeof v === "object" || typeof v === "function");
  const mapSize = Object.getOwnPropertyDescriptor(Map.prototype, "size").get;

  function define(target, name, value) {
    defineProperty(target, name, { __proto__: null, value, writable: true, enumerable: false, configurable: true });
  }
  shared.define = define;
  shared.DOMException = DOMExceptionCtor;

  // QuickJS's own said only "not a function" of `queueMicrotask(1)`.
  define(globalThis, "queueMicrotask", {
    queueMicrotask(callback) {
      if (typeof callback !== "function")
        throw new TypeError("queueMicrotask: the callback must be a function");
      queue(callback);
    },
  }.queueMicrotask);

  // Methods and accessors of a class as the built-ins have them.
  function hide(proto, names) {
    for (const name of names) {
      const d = Object.getOwnPropertyDescriptor(proto, name);
      if (d) { d.enumerable = false; defineProperty(proto, name, d); }
    }
  }

  const now = shared.now;

  class Event {
    #type; #cancelable; #bubbles; #composed; #canceled = false; #stopped = false;
    #propagationStopped = false; #target = null; #current = null; #timeStamp;
    constructor(type, init) {
      if (arguments.length === 0) throw new TypeError("Failed to construct 'Event': 1 argument required, but only 0 present.");
      this.#type = StringCtor(type);
      this.#bubbles = !!(init && init.bubbles);
      this.#cancelable = !!(init && init.cancelable);
      this.#composed = !!(init && init.composed);
      this.#timeStamp = now();
    }
    get type() { return this.#type; }
    get target() { return this.#target; }
    get currentTarget() { return this.#current; }
    get srcElement() { return this.#target; }
    get bubbles() { return this.#bubbles; }
    get cancelable() { return this.#cancelable; }
    get defaultPrevented() { return this.#canceled; }
    get eventPhase() { return this.#current === null ? 0 : 2; }
    get isTrusted() { return false; }
    get timeStamp() { return this.#timeStamp; }
    get composed() { return this.#composed; }
    get returnValue() { return !this.#canceled; }
    set returnValue(v) { if (!v) this.preventDefault(); }
    get cancelBubble() { return this.#propagationStopped; }
    set cancelBubble(v) { if (v) this.#propagationStopped = true; }
    composedPath() { return this.#current === null ? [] : [this.#current]; }
    preventDefault() { if (this.#cancelable) this.#canceled = true; }
    stopPropagation() { this.#propagationStopped = true; }
    stopImmediatePropagation() { this.#propagationStopped = true; this.#stopped = true; }
    initEvent(type, bubbles = false, cancelable = false) {
      if (this.#current !== null) return;
      this.#type = StringCtor(type); this.#bubbles = !!bubbles; this.#cancelable = !!cancelable;
      this.#canceled = false; this.#stopped = false; this.#propagationStopped = false; this.#target = null;
    }
    // An event is dispatched by one target at a time (the standard's
    // InvalidStateError); each dispatch is its own target's.
    static _dispatching(event, target) {
      if (event.#current !== null)
        throw new DOMExceptionCtor("EventTarget.dispatchEvent: the event is already being dispatched", "InvalidStateError");
      event.#target = target; event.#current = target; event.#stopped = false;
    }
    static _done(event) { event.#current = null; }
    static _stopped(event) { return event.#stopped; }
    static _is(event) { return isObject(event) && #type in event; }
  }
  const { _dispatching, _done, _stopped, _is } = Event;
  delete Event._dispatching; delete Event._done; delete Event._stopped; delete Event._is;
  hide(Event.prototype, ["type", "target", "currentTarget", "srcElement", "bubbles", "cancelable",
    "defaultPrevented", "eventPhase", "isTrusted", "timeStamp", "composed", "returnValue",
    "cancelBubble", "composedPath", "preventDefault", "stopPropagation",
    "stopImmediatePropagation", "initEvent"]);
  for (const [name, value] of [["NONE", 0], ["CAPTURING_PHASE", 1], ["AT_TARGET", 2], ["BUBBLING_PHASE", 3]]) {
    defineProperty(Event, name, { value, enumerable: true });
    defineProperty(Event.prototype, name, { value, enumerable: true });
  }
  defineProperty(Event.prototype, Symbol.toStringTag, { value: "Event", configurable: true });

  class CustomEvent extends Event {
    #detail;
    constructor(type, init) {
      if (arguments.length === 0) throw new TypeError("Failed to construct 'CustomEvent': 1 argument required, but only 0 present.");
      super(type, init);
      this.#detail = init && init.detail !== undefined ? init.detail : null;
    }
    get detail() { return this.#detail; }
  }
  hide(CustomEvent.prototype, ["detail"]);
  defineProperty(CustomEvent.prototype, Symbol.toStringTag, { value: "CustomEvent", configurable: true });

  // A listener that throws does not stop the others; what it threw is
  // rethrown from a job of its own, which ends the run as an uncaught
  // exception does.
  function report(error) { queue(() => { throw error; }); }

  // A target's listeners of one type: `list` in the order they were added
  // (a removed one is marked, and the list compacted once half of it is
  // removed), and `byCallback`, each callback's entries (one per capture
  // flag), so that adding and removing do not scan the list: ten thousand
  // `once` listeners dispatched, or as many added, took seconds.
  function listenersOf(listeners, type, make) {
    let bucket = apply(mapGet, listeners, [type]);
    if (bucket === undefined && make) {
      bucket = { list: [], byCallback: new MapCtor(), removed: 0 };
      apply(mapSet, listeners, [type, bucket]);
    }
    return bucket;
  }
  function findEntry(entries, capture) {
    for (let i = 0; i < entries.length; i++) if (entries[i].capture === capture) return i;
    return -1;
  }
  function removeEntry(target, listeners, type, bucket, callback, capture) {
    const entries = apply(mapGet, bucket.byCallback, [callback]);
    if (entries === undefined) return;
    const i = findEntry(entries, capture);
    if (i < 0) return;
    entries[i].removed = true;
    // Its signal no longer needs to remove it.
    if (entries[i].signal !== undefined) forgetAbort(entries[i].signal, entries[i].abortKey);
    if (type === "abort" && isSignal(target)) observed(target, -1);
    apply(arraySplice, entries, [i, 1]);
    if (entries.length === 0) apply(mapDelete, bucket.byCallback, [callback]);
    // A type with no listener left goes (a dispatch under way keeps its
    // own copy of the list).
    if (apply(mapSize, bucket.byCallback, []) === 0) {
      if (apply(mapGet, listeners, [type]) === bucket) apply(mapDelete, listeners, [type]);
      return;
    }
    bucket.removed++;
    if (bucket.removed > 16 && bucket.removed * 2 > bucket.list.length) {
      const kept = [];
      for (let j = 0; j < bucket.list.length; j++) {
        if (!bucket.list[j].removed) apply(arrayPush, kept, [bucket.list[j]]);
      }
      bucket.list = kept;
      bucket.removed = 0;
    }
  }

  class EventTarget {
    #listeners = new MapCtor();
    constructor() {}
    addEventListener(type, callback, options) {
      if (callback === null || callback === undefined) return;
      if (typeof callback !== "function" && (typeof callback !== "object"))
        throw new TypeError("EventTarget.addEventListener: the listener is not an object or a function");
      const capture = typeof options === "boolean" ? options : !!(options && options.capture);
      const once = !!(options && typeof options === "object" && options.once);
      const signal = options && typeof options === "object" ? options.signal : undefined;
      if (signal !== undefined && !isSignal(signal))
        throw new TypeError("EventTarget.addEventListener: options.signal is not an AbortSignal");
      if (signal !== undefined && signalAborted(signal)) return;
      type = StringCtor(type);
      const bucket = listenersOf(this.#listeners, type, true);
      let entries = apply(mapGet, bucket.byCallback, [callback]);
      if (entries !== undefined && findEntry(entries, capture) >= 0) return;
      if (entries === undefined) {
        entries = [];
        apply(mapSet, bucket.byCallback, [callback, entries]);
      }
      const entry = { callback, capture, once, removed: false, signal, abortKey: 0 };
      apply(arrayPush, entries, [entry]);
      apply(arrayPush, bucket.list, [entry]);
      if (type === "abort" && isSignal(this)) observed(this, 1);
      if (signal !== undefined) entry.abortKey = onAbortRemove(signal, this, type, entry);
    }
    // What `{ signal }` does when the signal aborts: the listener goes, if
    // its target and entry are still there.
    static _removeAborted(target, type, entry) {
      if (entry.removed) return;
      const bucket = listenersOf(target.#listeners, type, false);
      if (bucket !== undefined) removeEntry(target, target.#listeners, type, bucket, entry.callback, entry.capture);
    }
    removeEventListener(type, callback, options) {
      const capture = typeof options === "boolean" ? options : !!(options && options.capture);
      const bucket = listenersOf(this.#listeners, StringCtor(type), false);
      if (bucket !== undefined) removeEntry(this, this.#listeners, StringCtor(type), bucket, callback, capture);
    }
    dispatchEvent(event) {
      if (!_is(event)) throw new TypeError("EventTarget.dispatchEvent: the argument is not an Event");
      _dispatching(event, this);
      try {
        const bucket = listenersOf(this.#listeners, event.type, false);
        if (bucket !== undefined) {
          const list = apply(arraySlice, bucket.list, []);
          for (let i = 0; i < list.length; i++) {
            const entry = list[i];
            if (entry.removed) continue;
            if (entry.once) removeEntry(this, this.#listeners, event.type, bucket, entry.callback, entry.capture);
            try {
              if (typeof entry.callback === "function") apply(entry.callback, this, [event]);
              else { const h = entry.callback.handleEvent; if (typeof h === "function") apply(h, entry.callback, [event]); }
            } catch (e) { report(e); }
            if (_stopped(event)) break;
          }
        }
      } finally {
        _done(event);
      }
      return !event.defaultPrevented;
    }
  }
  const removeAborted = EventTarget._removeAborted;
  delete EventTarget._removeAborted;
  hide(EventTarget.prototype, ["addEventListener", "removeEventListener", "dispatchEvent"]);
  defineProperty(EventTarget.prototype, Symbol.toStringTag, { value: "EventTarget", configurable: true });

  // The timers of the current run (they are defined per run, after the
  // snapshot this file runs before).
  let setTimer = null, clearTimer = null;
  shared.adoptTimers = function (set, clear) { setTimer = set; clearTimer = clear; };

  // The keys of the algorithms signals run on abort.
  let abortKeys = 0;
  // A signal made by `AbortSignal.any` is reached by its sources through a
  // holder: a weak reference, and the signal itself while something would
  // see it abort (an abort listener, or an algorithm: a call watching it,
  // a listener it is to remove). So it lives as long as the standard
  // says, no longer: while a source that could abort it lives and
  // something would see it abort. Held strongly by its sources, every
  // `any` over a signal that lives long stayed with it for the run (2,549
  // calls, each with `AbortSignal.any([c.signal])`, filled 8 MiB); kept in
  // a set of the run's while observed, an observed `any` kept its
  // sources, which nothing could abort any more (600 controllers, each
  // with an `any` over its signal listened to). A signal made by
  // `AbortSignal.timeout` is held by its timer weakly, and in this set
  // while observed: its timer is its only source, which aborts it or is
  // gone. Held strongly, every timeout signal stayed for its whole delay
  // (2,011 calls with `AbortSignal.timeout(60000)` filled 8 MiB).
  const observedTimeouts = new SetCtor();
  const internal = Symbol("internal");
  class AbortSignal extends EventTarget {
    #aborted = false; #reason = undefined; #handler = null;
    // Algorithms run on abort, before the event, by key (a Map, made on
    // first use): each is forgotten once what it was for is done (a call
    // answered, a listener removed), or a signal shared by many calls
    // kept one for every call it ever watched.
    #inner = null;
    // The holders of the signals made by `any` over this one (dead ones
    // pruned as it grows), and for a signal made by `any`, its sources
    // (never themselves made by `any`: the standard's flattening).
    #dependents = []; #pruneAt = 16; #sources = null;
    // A signal made by `any`: what its sources hold it by
    // (`{ strong, weak }`); one made by `timeout`; how many would see it
    // abort.
    #holder = null; #timed = false; #observers = 0;
    // When `#inner` is next looked over for listeners whose target is gone.
    #innerPruneAt = 16;
    constructor(key) {
      if (key !== internal) throw new TypeError("Illegal constructor");
      super();
    }
    get aborted() { return this.#aborted; }
    get reason() { return this.#reason; }
    get onabort() { return this.#handler; }
    set onabort(f) {
      if (this.#handler) this.removeEventListener("abort", this.#handler);
      this.#handler = typeof f === "function" ? f : null;
      if (this.#handler) this.addEventListener("abort", this.#handler);
    }
    throwIfAborted() { if (this.#aborted) throw this.#reason; }
    static abort(reason) {
      const s = new AbortSignal(internal);
      s.#aborted = true;
      s.#reason = reason === undefined ? unthrown("This operation was aborted", "AbortError") : reason;
      return s;
    }
    static timeout(ms) {
      ms = Number(ms);
      if (!(ms >= 0) || ms > Number.MAX_SAFE_INTEGER)
        throw new TypeError("AbortSignal.timeout: the delay must be a non-negative number of milliseconds");
      if (setTimer === null) throw new TypeError("AbortSignal.timeout: no timers in this context");
      const s = new AbortSignal(internal);
      s.#timed = true;
      const held = new WeakRefCtor(s);
      setTimer(() => {
        const t = apply(deref, held, []);
        if (t !== undefined) abortSignal(t, unthrown("The operation was aborted due to timeout", "TimeoutError"));
      }, ms);
      return s;
    }
    static any(signals) {
      const s = new AbortSignal(internal);
      const sources = [];
      for (const source of signals) {
        if (!isSignal(source)) throw new TypeError("AbortSignal.any: every member must be an AbortSignal");
        apply(arrayPush, sources, [source]);
      }
      for (let i = 0; i < sources.length; i++) {
        const source = sources[i];
        if (source.#aborted) { s.#aborted = true; s.#reason = source.#reason; return s; }
      }
      const flat = [], seen = new SetCtor();
      const take = (source) => {
        if (apply(setHas, seen, [source])) return;
        apply(setAdd, seen, [source]);
        apply(arrayPush, flat, [source]);
      };
      for (let i = 0; i < sources.length; i++) {
        const own = sources[i].#sources;
        if (own === null) take(sources[i]);
        else for (let j = 0; j < own.length; j++) take(own[j]);
      }
      s.#sources = flat;
      const holder = hold(s);
      for (let i = 0; i < flat.length; i++) {
        const source = flat[i];
        apply(arrayPush, source.#dependents, [holder]);
        if (source.#dependents.length > source.#pruneAt) {
          const all = source.#dependents, live = [];
          for (let j = 0; j < all.length; j++)
            if (apply(deref, all[j].weak, []) !== undefined) apply(arrayPush, live, [all[j]]);
          source.#dependents = live;
          source.#pruneAt = live.length * 2 > 16 ? live.length * 2 : 16;
        }
      }
      return s;
    }
    static _hold(s) {
      s.#holder = { strong: undefined, weak: new WeakRefCtor(s) };
      return s.#holder;
    }
    // One more (or one fewer) would see `s` abort: a signal its sources or
    // timer hold weakly is held strongly while any would.
    static _observed(s, delta) {
      s.#observers += delta;
      if (s.#aborted) return;
      if (s.#holder !== null) s.#holder.strong = s.#observers > 0 ? s : undefined;
      else if (s.#timed) apply(s.#observers > 0 ? setAdd : setDelete, observedTimeouts, [s]);
    }
    static _is(s) { return isObject(s) && #aborted in s; }
    static _aborted(s) { return s.#aborted; }
    static _onAbort(s, f) {
      if (s.#inner === null) s.#inner = new MapCtor();
      const key = ++abortKeys;
      apply(mapSet, s.#inner, [key, f]);
      observed(s, 1);
      if (apply(mapSize, s.#inner, []) > s.#innerPruneAt) {
        // Listeners whose target (or entry) is gone need no removing: a
        // long-lived signal given to listeners of targets the program
        // dropped kept each target and listener (1,300 bytes a target).
        const dead = [];
        apply(mapForEach, s.#inner, [(v, k) => {
          if (typeof v !== "function" &&
              (apply(deref, v.target, []) === undefined || apply(deref, v.entry, []) === undefined))
            apply(arrayPush, dead, [k]);
        }]);
        for (let i = 0; i < dead.length; i++) forgetAbort(s, dead[i]);
        const left = apply(mapSize, s.#inner, []);
        s.#innerPruneAt = left * 2 > 16 ? left * 2 : 16;
      }
      return key;
    }
    // A listener added with `{ signal: s }`: removed when `s` aborts. Its
    // target and entry are held weakly: a target nothing else reaches
    // cannot dispatch to the listener anyway.
    static _onAbortRemove(s, target, type, entry) {
      return onAbort(s, {
        target: new WeakRefCtor(target), entry: new WeakRefCtor(entry), type,
      });
    }
    static _forget(s, key) {
      if (s.#inner !== null && apply(mapDelete, s.#inner, [key])) observed(s, -1);
    }
    // A work list, not recursion: `any` of an `any` of ... thousands deep
    // (a retry loop that wraps its signal again each time) overflowed the
    // stack when the first one aborted.
    static _abort(first, reason) {
      const work = [first];
      while (work.length > 0) {
        const s = apply(arrayPop, work, []);
        if (s.#aborted) continue;
        s.#aborted = true;
        s.#reason = reason;
        const inner = s.#inner, dependents = s.#dependents;
        s.#inner = null; s.#dependents = [];
        // It aborts once: nothing more can see it do so.
        if (s.#holder !== null) s.#holder.strong = undefined;
        if (s.#timed) apply(setDelete, observedTimeouts, [s]);
        if (inner !== null)
          apply(mapForEach, inner, [(f) => {
            try {
              if (typeof f === "function") f(reason);
              else {
                const target = apply(deref, f.target, []), entry = apply(deref, f.entry, []);
                if (target !== undefined && entry !== undefined) removeAborted(target, f.type, entry);
              }
            } catch (e) { report(e); }
          }]);
        s.dispatchEvent(new Event("abort"));
        for (let i = dependents.length - 1; i >= 0; i--) {
          const d = apply(deref, dependents[i].weak, []);
          if (d !== undefined) apply(arrayPush, work, [d]);
        }
      }
    }
  }
  const isSignal = AbortSignal._is, signalAborted = AbortSignal._aborted,
    onAbort = AbortSignal._onAbort, forgetAbort = AbortSignal._forget, abortSignal = AbortSignal._abort,
    observed = AbortSignal._observed, hold = AbortSignal._hold, onAbortRemove = AbortSignal._onAbortRemove;
  delete AbortSignal._is; delete AbortSignal._aborted; delete AbortSignal._onAbort;
  delete AbortSignal._forget; delete AbortSignal._abort; delete AbortSignal._observed;
  delete AbortSignal._hold; delete AbortSignal._onAbortRemove;
  hide(AbortSignal.prototype, ["aborted", "reason", "onabort", "throwIfAborted"]);
  defineProperty(AbortSignal.prototype, Symbol.toStringTag, { value: "AbortSignal", configurable: true });

  class AbortController {
    #signal = new AbortSignal(internal);
    get signal() { return this.#signal; }
    abort(reason) {
      abortSignal(this.#signal, reason === undefined
        ? unthrown("This operation was aborted", "AbortError") : reason);
    }
  }
  hide(AbortController.prototype, ["signal", "abort"]);
  defineProperty(AbortController.prototype, Symbol.toStringTag, { value: "AbortController", configurable: true });

  // For host.call's `{signal}`: see web/mod.rs, `Web::begin_run`.
  // Returns the key to forget the watch by, or `{reason}` when the signal
  // has already aborted.
  shared.watchSignal = function watchSignal(signal, abortCall) {
    if (!isSignal(signal)) throw new TypeError("host.call: options.signal must be an AbortSignal");
    if (signalAborted(signal)) return freeze({ reason: signal.reason });
    return onAbort(signal, abortCall);
  };
  shared.forgetSignal = function forgetSignal(signal, key) { forgetAbort(signal, key); };

  define(globalThis, "Event", Event);
  define(globalThis, "CustomEvent", CustomEvent);
  define(globalThis, "EventTarget", EventTarget);
  define(globalThis, "AbortSignal", AbortSignal);
  define(globalThis, "AbortController", AbortController);
})
